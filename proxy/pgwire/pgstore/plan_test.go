package pgstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanFor_IsWhatForgetRunsOnColumnsOfTheTypesTheRuleImplies(t *testing.T) {
	table, err := ParseTable("public.langchain_pg_embedding", "id", []string{"cmetadata->>'user_id'", "owner"})
	require.NoError(t, err)
	plan, err := PlanFor(table, false)
	require.NoError(t, err)

	// A catalog where the path's column is jsonb and the others have a
	// type forget compares as text: forget states exactly the plan.
	m, err := NewMatch(table, map[string]string{"id": "numeric", "cmetadata": "jsonb", "owner": "numeric"})
	require.NoError(t, err)
	assert.Equal(t, m.CountQueries(), plan.VerifyQueries)
	assert.Equal(t, []string{m.deleteQuery(m.BySubject, deleteBatch), m.deleteQuery(m.ByID, deleteBatch)}, plan.Deletes)
	assert.Equal(t, verifyMethod, plan.VerifyMethod)
	assert.Contains(t, plan.VerifyQueries[0], `"cmetadata"->>'user_id' = $1::text`)
	assert.Contains(t, plan.VerifyQueries[0], `"owner"::text = $1::text`)
	assert.Empty(t, plan.Cleanup, "no VACUUM unless the rule asks for it")
}

func TestPlanFor_VacuumsWhenTheRuleSaysSo(t *testing.T) {
	table, err := ParseTable("app.notes", "id", []string{"user_id"})
	require.NoError(t, err)
	plan, err := PlanFor(table, true)
	require.NoError(t, err)
	assert.Equal(t, `VACUUM (INDEX_CLEANUP ON) "app"."notes"`, plan.Cleanup)
	for _, q := range append(plan.Deletes, plan.VerifyQueries...) {
		assert.True(t, strings.Contains(q, `"app"."notes"`), q)
	}
}

func TestParseTable_RefusesWhatCaptureWouldRefuse(t *testing.T) {
	_, err := ParseTable("a.b.c", "id", []string{"user_id"})
	assert.Error(t, err)
	_, err = ParseTable("public.notes", "id", []string{"user_id +"})
	assert.Error(t, err)
}
