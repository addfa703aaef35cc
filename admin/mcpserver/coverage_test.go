package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// TestTools_CoverageIsReadOnlyAndAnswersTheSurvey: an auditor's agent
// gets the coverage tool, annotated read-only, and its answer is the
// admin API's survey: the store's rules and its uncovered table.
func TestTools_CoverageIsReadOnlyAndAnswersTheSurvey(t *testing.T) {
	r := newAPIRig(t)
	for _, token := range []string{r.Auditor, r.OperatorToken} {
		cs := r.session(t, token)
		var tool *mcp.Tool
		for tl, err := range cs.Tools(context.Background(), nil) {
			require.NoError(t, err)
			if tl.Name == "coverage" {
				tool = tl
			}
		}
		require.NotNil(t, tool, "coverage tool offered")
		assert.True(t, tool.Annotations.ReadOnlyHint)
		var s coverage.Survey
		call(t, cs, "coverage", map[string]any{}, &s)
		require.Len(t, s.Stores, 1)
		assert.Equal(t, coverage.StorePostgres, s.Stores[0].Store)
		assert.Equal(t, []coverage.Rule{{Table: "public.mcp_docs", Where: "lethe.yaml:5"}}, s.Stores[0].Rules)
		require.Len(t, s.Stores[0].Findings, 1)
		assert.Equal(t, "public.mcp_notes", s.Stores[0].Findings[0].Table)
		assert.Equal(t, 1, s.Errors)
	}
	assert.Contains(t, r.Log.String(), "tool=coverage caller=agent-audit")
}
