package coverage

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleReport() Report {
	tables := []Table{table("public.notes", "id text", "embedding vector")}
	p := Policy{Tables: []TableRule{{Table: "public.later", Where: "lethe.yaml:12", Columns: []RuleColumn{{"id", "id"}}}}}
	return Report{Findings: CheckTables(p, tables), TablesChecked: 1}
}

func TestWrite_Text(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Write(&b, FormatText, sampleReport()))
	out := b.String()
	assert.Contains(t, out, "WARNING lethe.yaml:12: capture.tables names public.later, which does not exist (yet)\n")
	assert.Contains(t, out, "ERROR   database: table public.notes has vector column embedding and no rule\n")
	assert.Contains(t, out, "\n              - {table: public.notes, id: id, subjects: [SUBJECT_COLUMN]}\n")
	assert.True(t, strings.HasSuffix(out, "coverage FAILED: 1 error, 1 warning (1 table, 0 namespaces checked)\n"), out)
}

// Every finding is one workflow command line: the message's line breaks
// and the properties' separators are escaped.
func TestWrite_GitHubAnnotations(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Write(&b, FormatGitHub, sampleReport()))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	annotation := regexp.MustCompile(`^::(error|warning) ([a-z]+=[^,:]*)(,[a-z]+=[^,:]*)*::[^\n]+$`)
	assert.Regexp(t, annotation, lines[0])
	assert.Regexp(t, annotation, lines[1])
	assert.True(t, strings.HasPrefix(lines[0], "::warning file=lethe.yaml,line=12,title=Lethe coverage%3A public.later::"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "::error title=Lethe coverage%3A public.notes::table public.notes has"), lines[1])
	assert.Contains(t, lines[1], "%0A")
	assert.Equal(t, "coverage FAILED: 1 error, 1 warning (1 table, 0 namespaces checked)", lines[2])
}

func TestWrite_JSON(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Write(&b, FormatJSON, sampleReport()))
	var got struct {
		Version  int
		Findings []map[string]any
		Summary  map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(b.String()), &got))
	assert.Equal(t, 1, got.Version)
	require.Len(t, got.Findings, 2)
	assert.Equal(t, "warning", got.Findings[0]["severity"])
	assert.Equal(t, "missing_table", got.Findings[0]["code"])
	assert.Equal(t, "public.notes", got.Findings[1]["table"])
	assert.Equal(t, map[string]any{"ok": false, "errors": 1.0, "warnings": 1.0, "tables_checked": 1.0, "namespaces_checked": 0.0}, got.Summary)

	b.Reset()
	require.NoError(t, Write(&b, FormatJSON, Report{}))
	assert.Contains(t, b.String(), `"findings": []`)
}

func TestWrite_UnknownFormat(t *testing.T) {
	assert.ErrorContains(t, Write(&strings.Builder{}, "xml", Report{}), "use one of text, github, json")
}

// A store that could not be read makes the report INCOMPLETE in every
// format: never ok, whatever the stores that were read say.
func TestWrite_UncheckedStoreIsNeverOK(t *testing.T) {
	r := Report{NamespacesChecked: 2, Unchecked: []string{"postgres"}}
	for format, want := range map[string]string{
		FormatText:   "coverage INCOMPLETE: 0 errors, 0 warnings (0 tables, 2 namespaces checked; not checked: postgres)\n",
		FormatGitHub: "coverage INCOMPLETE: 0 errors, 0 warnings (0 tables, 2 namespaces checked; not checked: postgres)\n",
	} {
		var b strings.Builder
		require.NoError(t, Write(&b, format, r))
		assert.Equal(t, want, b.String(), format)
	}
	var b strings.Builder
	require.NoError(t, Write(&b, FormatJSON, r))
	var out struct {
		Summary struct {
			OK        bool     `json:"ok"`
			Unchecked []string `json:"unchecked"`
		} `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.String()), &out))
	assert.False(t, out.Summary.OK)
	assert.Equal(t, []string{"postgres"}, out.Summary.Unchecked)
}
