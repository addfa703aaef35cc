//go:build integration

package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestDataMap_PlanIsWhatForgetStates: on a table whose columns have the
// types its rule implies (a jsonb column under a JSON path, other columns
// of a type compared as text), the data map's statements are the ones a
// real forget runs and its certificate states, read from the catalog.
func TestDataMap_PlanIsWhatForgetStates(t *testing.T) {
	db := loadTestDB(t)
	extDropTables(t, db, "public.datamap_plan")
	extExec(t, db, "CREATE TABLE public.datamap_plan (id numeric PRIMARY KEY, cmetadata jsonb, owner numeric, embedding vector(3))",
		`INSERT INTO public.datamap_plan VALUES (1, '{"user_id": "dm-alice"}', NULL, '[1,2,3]'), (2, '{"user_id": "dm-bob"}', 7, '[1,2,3]')`)
	ctx := ctxT(t)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	table, err := pgstore.ParseTable("public.datamap_plan", "id", []string{"cmetadata->>'user_id'", "owner"})
	require.NoError(t, err)
	plan, err := pgstore.PlanFor(table, true)
	require.NoError(t, err)

	layer, err := pgstore.NewLayer(ctx, store, table, true)
	require.NoError(t, err)
	deleted, err := layer.Delete(ctx, "dm-alice", []string{"1"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, deleted)
	require.NoError(t, layer.Cleanup(ctx), "the plan's VACUUM statement runs")
	absence, err := layer.Residual(ctx, "dm-alice", []string{"1"})
	require.NoError(t, err)
	assert.Zero(t, absence.Residual)
	assert.Equal(t, plan.VerifyQueries, absence.Queries)
	assert.Equal(t, plan.VerifyMethod, absence.Method)
}
