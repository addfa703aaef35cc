package engine

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

func TestList_NewestFirstWithOverdueFlagsAndMore(t *testing.T) {
	ctx := context.Background()
	te := newTestEngine(t, time.Hour)
	now := te.cfg.Now()
	open := func(id, subject string, received, deadline time.Time) {
		require.NoError(t, te.ledger.OpenForget(ctx, ledger.ForgetRequest{
			ID: id, Subject: te.hasher.Hash(subject), TokenHash: sha256.Sum256([]byte(id)),
			ReceivedAt: received, Deadline: deadline, State: []byte(`{}`),
		}))
	}
	open("late", "alice", now.Add(-3*time.Hour), now.Add(-time.Hour))
	open("done-late", "bob", now.Add(-2*time.Hour), now.Add(-time.Minute))
	open("on-time", "carol", now.Add(-time.Hour), now.Add(time.Hour))
	require.NoError(t, te.ledger.FinishForget(ctx, "done-late", ledger.ForgetCompleted, []byte(`{}`), []byte("cert")))

	all, err := te.List(ctx, ListFilter{})
	require.NoError(t, err)
	require.False(t, all.More)
	type row struct {
		id      string
		status  ledger.ForgetStatus
		overdue bool
	}
	var got []row
	for _, r := range all.Requests {
		got = append(got, row{r.RequestID, r.Status, r.Overdue})
	}
	require.Equal(t, []row{
		{"on-time", ledger.ForgetReceived, false},
		{"done-late", ledger.ForgetCompleted, false}, // finished: never overdue
		{"late", ledger.ForgetReceived, true},
	}, got)

	overdue, err := te.List(ctx, ListFilter{Overdue: true})
	require.NoError(t, err)
	require.Len(t, overdue.Requests, 1)
	require.Equal(t, "late", overdue.Requests[0].RequestID)

	te.advance(2 * time.Hour) // on-time's deadline passes
	overdue, err = te.List(ctx, ListFilter{Overdue: true, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, "on-time", overdue.Requests[0].RequestID)
	require.True(t, overdue.Requests[0].Overdue)
	require.True(t, overdue.More, "late is overdue too, beyond the limit")

	none, err := te.List(ctx, ListFilter{Status: ledger.ForgetFailed})
	require.NoError(t, err)
	require.NotNil(t, none.Requests, "an empty list is [], not null, in JSON")
	require.Empty(t, none.Requests)
}

func TestList_RefusesAFilterThatCannotMatch(t *testing.T) {
	te := newTestEngine(t, time.Hour)
	for _, f := range []ListFilter{
		{Status: "done"},
		{Status: ledger.ForgetCompleted, Overdue: true},
		{Limit: -1},
		{Limit: MaxListLimit + 1},
	} {
		_, err := te.List(context.Background(), f)
		require.Error(t, err, "%+v", f)
	}
}
