package ledger

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSQLite_JournalContract(t *testing.T) { runJournalContract(t, sqliteBackend) }
func TestPostgres_JournalContract(t *testing.T) {
	testPGConnString(t)
	runJournalContract(t, pgBackend)
}

func forgetRequest(id, subject, token string) ForgetRequest {
	now := time.Now().Truncate(time.Microsecond)
	return ForgetRequest{
		ID: id, Subject: testHasher.Hash(subject), TokenHash: sha256.Sum256([]byte(token)),
		ReceivedAt: now, Deadline: now.Add(30 * 24 * time.Hour), State: []byte(`{"step":"plan"}`),
	}
}

// runJournalContract pins the forget journal's promises on one backend.
func runJournalContract(t *testing.T, b backend) {
	ctx := context.Background()
	fresh := func(t *testing.T) (Journal, func(t *testing.T) Journal) {
		open, _ := b.newStore(t)
		reopen := func(t *testing.T) Journal {
			l := open(t)
			t.Cleanup(func() { l.Close() })
			return l.(Journal)
		}
		return reopen(t), reopen
	}

	t.Run("OpenThenReadBack_SurvivesReopen", func(t *testing.T) {
		j, reopen := fresh(t)
		r := forgetRequest("req-1", "alice", "tok-1")
		require.NoError(t, j.OpenForget(ctx, r))
		require.NoError(t, j.(Ledger).Close())
		j = reopen(t)
		got, err := j.Forget(ctx, "req-1")
		require.NoError(t, err)
		require.Equal(t, ForgetReceived, got.Status)
		require.Equal(t, r.Subject, got.Subject)
		require.Equal(t, r.TokenHash, got.TokenHash)
		require.True(t, r.ReceivedAt.Equal(got.ReceivedAt))
		require.True(t, r.Deadline.Equal(got.Deadline))
		require.Equal(t, r.State, got.State)
		byToken, err := j.ForgetByToken(ctx, r.TokenHash)
		require.NoError(t, err)
		require.Equal(t, "req-1", byToken.ID)
		open, err := j.OpenForgets(ctx)
		require.NoError(t, err)
		require.Len(t, open, 1)
	})

	t.Run("TokenIsSingleUse", func(t *testing.T) {
		j, _ := fresh(t)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-1", "alice", "tok")))
		require.NoError(t, j.FinishForget(ctx, "req-1", ForgetCompleted, []byte(`{}`), []byte("cert")))
		require.ErrorIs(t, j.OpenForget(ctx, forgetRequest("req-2", "alice", "tok")), ErrTokenUsed)
		require.ErrorIs(t, j.OpenForget(ctx, forgetRequest("req-3", "bob", "tok")), ErrTokenUsed)
	})

	t.Run("OneOpenForgetPerSubject", func(t *testing.T) {
		j, _ := fresh(t)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-1", "alice", "t1")))
		require.ErrorIs(t, j.OpenForget(ctx, forgetRequest("req-2", "alice", "t2")), ErrForgetInProgress)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-3", "bob", "t3")), "another subject is independent")
		require.NoError(t, j.FinishForget(ctx, "req-1", ForgetCompleted, nil, []byte("cert")))
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-4", "alice", "t4")), "a finished forget does not block a new one")
	})

	t.Run("ConcurrentOpensOfOneSubject_OneWins", func(t *testing.T) {
		j, _ := fresh(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = j.OpenForget(ctx, forgetRequest("req-"+string(rune('a'+i)), "alice", "tok-"+string(rune('a'+i))))
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				require.ErrorIs(t, err, ErrForgetInProgress)
			}
		}
		require.Equal(t, 1, won)
	})

	t.Run("OpenTombstonesTheSubject_LiftRemovesIt", func(t *testing.T) {
		j, _ := fresh(t)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-1", "alice", "t1")))
		ts, err := j.Tombstones(ctx)
		require.NoError(t, err)
		require.Len(t, ts, 1)
		require.Equal(t, testHasher.Hash("alice"), ts[0].Subject)
		require.Equal(t, "req-1", ts[0].RequestID)
		lifted, err := j.LiftTombstone(ctx, testHasher.Hash("alice"))
		require.NoError(t, err)
		require.True(t, lifted)
		lifted, err = j.LiftTombstone(ctx, testHasher.Hash("alice"))
		require.NoError(t, err)
		require.False(t, lifted)
		ts, err = j.Tombstones(ctx)
		require.NoError(t, err)
		require.Empty(t, ts)
	})

	t.Run("FinishedRequestKeepsItsCertificate", func(t *testing.T) {
		j, _ := fresh(t)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-1", "alice", "t1")))
		require.NoError(t, j.SaveForget(ctx, "req-1", []byte(`{"step":"deleted"}`)))
		require.NoError(t, j.FinishForget(ctx, "req-1", ForgetCompleted, []byte(`{"step":"done"}`), []byte("cert-1")))
		require.ErrorIs(t, j.FinishForget(ctx, "req-1", ForgetCompleted, nil, []byte("cert-2")), ErrForgetFinished)
		require.ErrorIs(t, j.SaveForget(ctx, "req-1", []byte(`{}`)), ErrForgetFinished)
		got, err := j.Forget(ctx, "req-1")
		require.NoError(t, err)
		require.Equal(t, ForgetCompleted, got.Status)
		require.Equal(t, []byte("cert-1"), got.Certificate)
		require.Equal(t, []byte(`{"step":"done"}`), got.State)
		open, err := j.OpenForgets(ctx)
		require.NoError(t, err)
		require.Empty(t, open)
	})

	t.Run("LateWritesAreKeptPerRequest", func(t *testing.T) {
		j, reopen := fresh(t)
		at := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
		require.NoError(t, j.AddLateWrite(ctx, LateWrite{RequestID: "req-1", At: at, Store: StorePostgres, Table: "public.docs", Deleted: 2, LogIndex: 7}))
		require.NoError(t, j.AddLateWrite(ctx, LateWrite{RequestID: "req-2", At: at, Store: StorePostgres, Table: "public.docs", Deleted: 1, LogIndex: 8}))
		require.NoError(t, j.AddLateWrite(ctx, LateWrite{RequestID: "req-1", At: at.Add(time.Second), Store: StorePinecone, Table: "idx/ns", Deleted: 1, Residual: 1, LogIndex: 9}))
		require.NoError(t, j.(Ledger).Close())
		j = reopen(t)
		got, err := j.LateWrites(ctx, "req-1")
		require.NoError(t, err)
		require.Equal(t, []LateWrite{
			{RequestID: "req-1", At: at, Store: StorePostgres, Table: "public.docs", Deleted: 2, LogIndex: 7},
			{RequestID: "req-1", At: at.Add(time.Second), Store: StorePinecone, Table: "idx/ns", Deleted: 1, Residual: 1, LogIndex: 9},
		}, got)
		none, err := j.LateWrites(ctx, "req-3")
		require.NoError(t, err)
		require.Empty(t, none)
	})

	t.Run("ListNewestFirst_FiltersByStatusAndDeadline", func(t *testing.T) {
		j, _ := fresh(t)
		base := time.Now().Truncate(time.Microsecond)
		open := func(id, subject string, received time.Time, deadline time.Duration) {
			r := forgetRequest(id, subject, "tok-"+id)
			r.ReceivedAt, r.Deadline = received, received.Add(deadline)
			require.NoError(t, j.OpenForget(ctx, r))
		}
		open("req-old", "alice", base.Add(-3*time.Hour), time.Hour) // deadline passed
		open("req-mid", "bob", base.Add(-2*time.Hour), time.Hour)   // deadline passed, then completed
		open("req-new", "carol", base.Add(-time.Hour), 48*time.Hour)
		require.NoError(t, j.FinishForget(ctx, "req-mid", ForgetCompleted, []byte(`{}`), []byte("cert")))

		ids := func(f ForgetFilter) []string {
			t.Helper()
			got, err := j.ListForgets(ctx, f)
			require.NoError(t, err)
			var out []string
			for _, s := range got {
				out = append(out, s.ID)
			}
			return out
		}
		require.Equal(t, []string{"req-new", "req-mid", "req-old"}, ids(ForgetFilter{}))
		require.Equal(t, []string{"req-new", "req-mid"}, ids(ForgetFilter{Limit: 2}))
		require.Equal(t, []string{"req-mid"}, ids(ForgetFilter{Status: ForgetCompleted}))
		require.Equal(t, []string{"req-old"}, ids(ForgetFilter{Status: ForgetReceived, DeadlineBefore: base}), "overdue: open and past its deadline")
		require.Empty(t, ids(ForgetFilter{Status: ForgetFailed}))

		all, err := j.ListForgets(ctx, ForgetFilter{Status: ForgetReceived, Limit: 1})
		require.NoError(t, err)
		require.Len(t, all, 1)
		got := all[0]
		require.Equal(t, "req-new", got.ID)
		require.Equal(t, ForgetReceived, got.Status)
		require.True(t, base.Add(-time.Hour).Equal(got.ReceivedAt))
		require.True(t, base.Add(47*time.Hour).Equal(got.Deadline))
		require.False(t, got.UpdatedAt.IsZero())
	})

	t.Run("UnknownRequest", func(t *testing.T) {
		j, _ := fresh(t)
		_, err := j.Forget(ctx, "nope")
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorIs(t, j.SaveForget(ctx, "nope", nil), ErrNotFound)
		require.ErrorIs(t, j.FinishForget(ctx, "nope", ForgetFailed, nil, nil), ErrNotFound)
	})

	t.Run("LeaseIsExclusiveUntilItExpires", func(t *testing.T) {
		j, _ := fresh(t)
		require.NoError(t, j.OpenForget(ctx, forgetRequest("req-1", "alice", "t1")))
		ok, err := j.LeaseForget(ctx, "req-1", "engine-a", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = j.LeaseForget(ctx, "req-1", "engine-b", time.Hour)
		require.NoError(t, err)
		require.False(t, ok, "held by engine-a")
		ok, err = j.LeaseForget(ctx, "req-1", "engine-a", time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok, "the holder renews")
		time.Sleep(20 * time.Millisecond)
		ok, err = j.LeaseForget(ctx, "req-1", "engine-b", time.Hour)
		require.NoError(t, err)
		require.True(t, ok, "expired lease is taken over")
	})
}
