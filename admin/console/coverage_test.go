package console_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/capture/coverage"
)

// storeCheck is one store's coverage check with a canned answer.
type storeCheck struct {
	name   string
	report coverage.Report
	err    error
}

func (s storeCheck) Name() string { return s.name }

func (s storeCheck) Coverage(context.Context, coverage.Policy) (coverage.Report, error) {
	return s.report, s.err
}

// TestCoveragePage_FlagsUncoveredTablesAndListsRulesAndIgnores: an auditor
// sees, per store, the uncovered tables flagged with their fix, the
// rules that do not match, the covered and ignored tables with their
// reasons, and a store that could not be checked; the nav links to it.
func TestCoveragePage_FlagsUncoveredTablesAndListsRulesAndIgnores(t *testing.T) {
	policy := coverage.Policy{
		Tables:  []coverage.TableRule{{Table: "public.docs", Where: "lethe.yaml:4"}, {Table: "public.later", Where: "lethe.yaml:5"}},
		Indexes: []coverage.IndexRules{{Index: "memories", Where: "lethe.yaml:9", Namespaces: []string{"users"}}},
		Ignore:  []coverage.Ignore{{Table: "public.model_cache", Reason: "embeddings of public manuals", Where: "lethe.yaml:12"}},
	}
	rg := newRig(t, cannedEngine(), func(c *admin.Config) {
		c.Coverage = admin.CoverageConfig{Policy: policy, Checkers: []admin.CoverageChecker{
			storeCheck{name: coverage.StorePostgres, report: coverage.Report{TablesChecked: 4, Findings: []coverage.Finding{
				{Severity: coverage.Error, Code: coverage.CodeUncoveredTable, Store: coverage.StorePostgres, Table: "public.notes", Where: "database",
					Message: "table public.notes has vector column embedding and no rule", Fix: "add a capture rule"},
				{Severity: coverage.Warning, Code: coverage.CodeMissingTable, Store: coverage.StorePostgres, Table: "public.later", Where: "lethe.yaml:5",
					Message: "capture.tables names public.later, which does not exist (yet)"},
			}}},
			storeCheck{name: coverage.StorePinecone, err: errors.New("pinecone index \"memories\": describe_index_stats: connection refused")},
		}}
	})
	b := rg.visitor(t)
	b.login(auditorToken)

	assert.Contains(t, b.get("/console/requests").body, `href="/console/coverage"`)
	p := b.get("/console/coverage")
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.body, `data-errors="1" data-warnings="1" data-unreadable="1"`)
	assert.Contains(t, p.body, `<tr class="overdue" data-uncovered="public.notes">`)
	assert.Contains(t, p.body, `<strong>UNCOVERED</strong> <code>public.notes</code>`)
	assert.Contains(t, p.body, "add a capture rule")
	assert.Contains(t, p.body, `<tr data-code="missing_table">`)
	assert.Contains(t, p.body, `data-rule="public.docs"`)
	assert.Contains(t, p.body, `data-rule="memories/users"`)
	assert.Contains(t, p.body, `data-ignored="public.model_cache"><code>public.model_cache</code>: embeddings of public manuals`)
	assert.Contains(t, p.body, `<p class="problem" data-store-error>Not checked: pinecone: pinecone index &#34;memories&#34;: describe_index_stats: connection refused</p>`)
	assert.Contains(t, p.body, `id="runs-empty"`)
	assert.NotContains(t, p.body, `data-uncovered="public.docs"`)
}

// TestCoveragePage_NeedsASession: signed out, the coverage page sends the
// browser to the login page and runs no check.
func TestCoveragePage_NeedsASession(t *testing.T) {
	checked := make(chan struct{}, 1)
	rg := newRig(t, cannedEngine(), func(c *admin.Config) {
		c.Coverage = admin.CoverageConfig{Checkers: []admin.CoverageChecker{recordingCheck{checked}}}
	})
	p := rg.visitor(t).get("/console/coverage")
	assert.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, "/console/login", p.location)
	assert.Empty(t, checked)
}

type recordingCheck struct{ checked chan struct{} }

func (recordingCheck) Name() string { return coverage.StorePostgres }

func (r recordingCheck) Coverage(context.Context, coverage.Policy) (coverage.Report, error) {
	r.checked <- struct{}{}
	return coverage.Report{}, nil
}
