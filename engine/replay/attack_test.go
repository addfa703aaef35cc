package replay

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
)

// TestAttack_Replay_LiftedThenForgottenAgainReplaysTheLatestForget: a
// subject forgotten, lifted, written again and forgotten again is
// replayed once, as the second forget (the tombstone's), and what the
// restore brought back of either time is deleted.
func TestAttack_Replay_LiftedThenForgottenAgainReplaysTheLatestForget(t *testing.T) {
	table, rig, first := forgotten(t)
	lifted, err := rig.Engine.Lift(context.Background(), "alice")
	require.NoError(t, err)
	require.True(t, lifted)
	table.put("a3", "alice")
	rig.Record(t, "alice", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "a3"})
	second := rig.Forget(t, "alice")
	require.NotEqual(t, first, second)
	require.Equal(t, []string{"b1"}, table.ids())

	table.put("a1", "alice") // from before the first forget
	table.put("a3", "alice") // from between the lift and the second
	res, err := Run(context.Background(), config(rig, table))
	require.NoError(t, err)
	require.Len(t, res.Requests, 1, "one tombstone, one replay")
	assert.Equal(t, second, res.Requests[0].RequestID)
	assert.Equal(t, []string{"b1"}, table.ids())
	r, err := certificate.VerifyReport(res.Requests[0].Report, rig.Keys)
	require.NoError(t, err)
	assert.Equal(t, second, r.RunID)
}

// TestAttack_Replay_TwoAtOnceLeaveNothingAndBothReportsVerify: two replays
// run at the same time (two operators) both finish, alice is gone, bob
// kept, and each one's report verifies whatever share of the deletes it
// made.
func TestAttack_Replay_TwoAtOnceLeaveNothingAndBothReportsVerify(t *testing.T) {
	table, rig, req := forgotten(t)
	table.put("a1", "alice")
	table.put("a2", "alice")
	var wg sync.WaitGroup
	results := make([]Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = Run(context.Background(), config(rig, table))
		}()
	}
	wg.Wait()
	assert.Equal(t, []string{"b1"}, table.ids())
	var deleted int64
	for i := range 2 {
		require.NoError(t, errs[i])
		require.Len(t, results[i].Requests, 1)
		assert.Equal(t, req, results[i].Requests[0].RequestID)
		r, err := certificate.VerifyReport(results[i].Requests[0].Report, rig.Keys)
		require.NoError(t, err, "replay %d's report", i)
		deleted += r.Layers[0].Done
	}
	assert.Equal(t, int64(2), deleted, "each record deleted by one of them")
}
