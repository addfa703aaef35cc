package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/certificate"
)

// fakeChecker is one store's coverage check: its report, its error, or,
// with hang, no answer until the test ends (whatever its context says).
type fakeChecker struct {
	name   string
	report coverage.Report
	err    error
	hang   chan struct{}
}

func (f fakeChecker) Name() string { return f.name }

func (f fakeChecker) Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error) {
	if f.hang != nil {
		<-f.hang
	}
	return f.report, f.err
}

// fakeLog is a transparency log's records.
type fakeLog [][]byte

func (l fakeLog) Size(context.Context) (int64, error) { return int64(len(l)), nil }

func (l fakeLog) ReadRecord(_ context.Context, n int64) ([]byte, error) {
	if n < 0 || n >= int64(len(l)) {
		return nil, fmt.Errorf("no record %d", n)
	}
	return l[n], nil
}

func testPolicy() coverage.Policy {
	return coverage.Policy{
		Tables:  []coverage.TableRule{{Table: "public.docs", Where: "lethe.yaml:4"}},
		Indexes: []coverage.IndexRules{{Index: "memories", Where: "lethe.yaml:9", Namespaces: []string{"users"}}},
		Ignore:  []coverage.Ignore{{Table: "public.model_cache", Reason: "embeddings of public text", Where: "lethe.yaml:12"}},
	}
}

func uncoveredNotes() coverage.Finding {
	return coverage.Finding{Severity: coverage.Error, Code: coverage.CodeUncoveredTable, Store: coverage.StorePostgres,
		Table: "public.notes", Where: "database", Message: "table public.notes has vector column embedding and no rule"}
}

func getSurvey(t *testing.T, h *harness, token string) coverage.Survey {
	t.Helper()
	rec := h.do(http.MethodGet, "/v1/coverage", token, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var s coverage.Survey
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &s))
	return s
}

func TestCoverage_ReportsEveryStoreWithRulesIgnoresAndFindings(t *testing.T) {
	h := newHarness(t, cannedEngine(), func(c *Config) {
		c.Coverage = CoverageConfig{Policy: testPolicy(), Checkers: []CoverageChecker{
			fakeChecker{name: coverage.StorePostgres, report: coverage.Report{TablesChecked: 3, Findings: []coverage.Finding{uncoveredNotes()}}},
			fakeChecker{name: coverage.StorePinecone, report: coverage.Report{NamespacesChecked: 1}},
		}}
	})
	for _, token := range []string{operatorToken, auditorToken} {
		s := getSurvey(t, h, token)
		require.Len(t, s.Stores, 2)
		pg, pc := s.Stores[0], s.Stores[1]
		assert.Equal(t, coverage.StorePostgres, pg.Store)
		assert.Empty(t, pg.Error)
		assert.Equal(t, 3, pg.TablesChecked)
		assert.Equal(t, []coverage.Finding{uncoveredNotes()}, pg.Findings)
		assert.Equal(t, []coverage.Rule{{Table: "public.docs", Where: "lethe.yaml:4"}}, pg.Rules)
		assert.Equal(t, testPolicy().Ignore, pg.Ignored)
		assert.Equal(t, coverage.StorePinecone, pc.Store)
		assert.Equal(t, 1, pc.NamespacesChecked)
		assert.Equal(t, []coverage.Finding{}, pc.Findings)
		assert.Equal(t, []coverage.Rule{{Index: "memories", Namespace: "users", Where: "lethe.yaml:9"}}, pc.Rules)
		assert.Equal(t, []coverage.Ignore{}, pc.Ignored)
		assert.Equal(t, 1, s.Errors)
		assert.Equal(t, 0, s.Unreadable)
		assert.False(t, s.CheckedAt.IsZero())
	}
	assert.Equal(t, http.StatusUnauthorized, h.do(http.MethodGet, "/v1/coverage", "", "").Code)
	assert.Equal(t, http.StatusBadRequest, h.do(http.MethodGet, "/v1/coverage?store=postgres", operatorToken, "").Code)
}

func TestCoverage_AStoreThatFailsOrHangsIsReportedNotFatal(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	h := newHarness(t, cannedEngine(), func(c *Config) {
		c.Coverage = CoverageConfig{Policy: testPolicy(), Timeout: 50 * time.Millisecond, Checkers: []CoverageChecker{
			fakeChecker{name: coverage.StorePostgres, err: errors.New("connecting to capture.store: connection refused")},
			fakeChecker{name: coverage.StorePinecone, hang: hang},
			fakeChecker{name: "third", report: coverage.Report{TablesChecked: 1}},
		}}
	})
	s := getSurvey(t, h, auditorToken)
	require.Len(t, s.Stores, 3)
	assert.Equal(t, "postgres: connecting to capture.store: connection refused", s.Stores[0].Error)
	assert.Contains(t, s.Stores[1].Error, "pinecone: the coverage check did not finish within 50ms")
	assert.Contains(t, s.Stores[1].Error, "lethe-proxy check")
	assert.Empty(t, s.Stores[2].Error)
	assert.Equal(t, 1, s.Stores[2].TablesChecked)
	assert.Equal(t, 2, s.Unreadable)
	// The rules are listed even for a store that could not be read.
	assert.Equal(t, []coverage.Rule{{Table: "public.docs", Where: "lethe.yaml:4"}}, s.Stores[0].Rules)
}

func TestCoverage_ListsTheLatestReconcileAndSweepRunsOfTheLog(t *testing.T) {
	event := func(e certificate.Event) []byte {
		b, err := certificate.EncodeEvent(e)
		require.NoError(t, err)
		return b
	}
	hash := strings.Repeat("ab", 32)
	log := fakeLog{
		event(certificate.Event{Event: certificate.EventReconcileAdopted, RequestID: "reconcile-20250301T120000Z-00000001", ReportSHA256: hash}),
		event(certificate.Event{Event: certificate.EventRequested, RequestID: testID}),
		[]byte(`{"v":1,"event":"some.future_kind"}`),
		event(certificate.Event{Event: certificate.EventRetentionSwept, RequestID: "sweep-20250302T120000Z-00000002", ReportSHA256: hash}),
	}
	h := newHarness(t, cannedEngine(), func(c *Config) { c.Coverage = CoverageConfig{Log: log} })
	s := getSurvey(t, h, auditorToken)
	assert.Equal(t, []coverage.LoggedRun{
		{Event: certificate.EventRetentionSwept, RunID: "sweep-20250302T120000Z-00000002", LogIndex: 3, ReportSHA256: hash},
		{Event: certificate.EventReconcileAdopted, RunID: "reconcile-20250301T120000Z-00000001", LogIndex: 0, ReportSHA256: hash},
	}, s.Runs)
	assert.Equal(t, []coverage.StoreSurvey{}, s.Stores)
}
