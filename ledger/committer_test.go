package ledger

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeWriter commits batches in memory; a batch holding the poison intent
// fails as a whole, as a store error would.
type fakeWriter struct {
	mu      sync.Mutex
	next    IntentID
	batches [][]*request
	delay   time.Duration
	poison  string
}

func (f *fakeWriter) write(ctx context.Context, now time.Time, batch []*request) error {
	time.Sleep(f.delay) // an fsync
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range batch {
		if f.poison != "" && r.kind == opIntend && len(r.entries) > 0 && r.entries[0].RecordID == f.poison {
			return errors.New("disk says no")
		}
	}
	for _, r := range batch {
		f.next++
		r.id = f.next
	}
	f.batches = append(f.batches, append([]*request(nil), batch...))
	return nil
}

func intendConcurrently(c *committer, ids []string) ([]IntentID, []error) {
	out := make([]IntentID, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = writes{decisions: c}.Intend(context.Background(), []Entry{entry("t", id, "s")})
		}()
	}
	wg.Wait()
	return out, errs
}

func TestCommitter_GroupsConcurrentRequestsIntoOneTransaction(t *testing.T) {
	f := &fakeWriter{delay: 2 * time.Millisecond}
	c := newCommitter(f.write, Options{CommitWindow: 5 * time.Millisecond})
	defer c.close()
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = "r"
	}
	got, errs := intendConcurrently(c, ids)
	seen := map[IntentID]bool{}
	for i := range got {
		require.NoError(t, errs[i])
		require.False(t, seen[got[i]], "ids are distinct")
		seen[got[i]] = true
	}
	require.Less(t, c.batches.Load(), int64(20), "100 concurrent intents should share a few transactions")
	require.Equal(t, int64(100), c.requests.Load())
}

func TestCommitter_SubmitAllSharesTransactions(t *testing.T) {
	f := &fakeWriter{delay: 2 * time.Millisecond}
	c := newCommitter(f.write, Options{})
	defer c.close()
	rs := make([]*request, 100)
	for i := range rs {
		rs[i] = &request{kind: opConfirm, intent: IntentID(i + 1)}
	}
	for _, err := range c.submitAll(context.Background(), rs) {
		require.NoError(t, err)
	}
	require.Less(t, c.batches.Load(), int64(20), "100 confirmations queued at once share a few transactions")
	require.Equal(t, int64(100), c.requests.Load())
}

func TestCommitter_RespectsMaxBatch(t *testing.T) {
	f := &fakeWriter{delay: time.Millisecond}
	c := newCommitter(f.write, Options{CommitWindow: 20 * time.Millisecond, MaxBatch: 4})
	defer c.close()
	_, errs := intendConcurrently(c, make([]string, 40))
	for _, err := range errs {
		require.NoError(t, err)
	}
	for _, b := range f.batches {
		require.LessOrEqual(t, len(b), 4)
	}
}

func TestCommitter_OneBadRequestDoesNotFailItsBatch(t *testing.T) {
	f := &fakeWriter{delay: time.Millisecond, poison: "bad"}
	c := newCommitter(f.write, Options{CommitWindow: 20 * time.Millisecond})
	defer c.close()
	ids := []string{"a", "b", "bad", "c", "d"}
	got, errs := intendConcurrently(c, ids)
	for i, id := range ids {
		if id == "bad" {
			require.ErrorIs(t, errs[i], ErrUnavailable)
			require.ErrorContains(t, errs[i], "disk says no")
			continue
		}
		require.NoError(t, errs[i])
		require.NotZero(t, got[i])
	}
}

func TestCommitter_NoWindowStillBatchesWhatQueued(t *testing.T) {
	f := &fakeWriter{delay: 5 * time.Millisecond}
	c := newCommitter(f.write, Options{CommitWindow: -1})
	defer c.close()
	_, errs := intendConcurrently(c, make([]string, 50))
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Less(t, c.batches.Load(), int64(50))
}

// TestCommitter_IntentsCommitApartAndFirst: in a gathered batch, the
// intents commit in a transaction of their own, before the confirmations
// gathered with them, which commit too.
func TestCommitter_IntentsCommitApartAndFirst(t *testing.T) {
	f := &fakeWriter{}
	// A window long enough that a slow host still gathers the late
	// intent with the confirmations.
	c := newCommitter(f.write, Options{CommitWindow: 500 * time.Millisecond})
	defer c.close()
	ctx := context.Background()
	w := writes{decisions: c}
	ids, errs := intendConcurrently(c, []string{"a", "b", "c"})
	for _, err := range errs {
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, w.Confirm(ctx, id))
		}()
	}
	time.Sleep(50 * time.Millisecond) // within the window of the confirmations
	_, err := w.Intend(ctx, []Entry{entry("t", "late", "s")})
	require.NoError(t, err)
	wg.Wait()

	f.mu.Lock()
	defer f.mu.Unlock()
	last := f.batches[len(f.batches)-2:]
	require.Len(t, last[0], 1, "the late intent commits alone")
	require.Equal(t, "late", last[0][0].entries[0].RecordID)
	require.Len(t, last[1], len(ids), "then the confirmations gathered with it")
	for _, r := range last[1] {
		require.Equal(t, opConfirm, r.kind)
	}
}

// TestCommitter_LogsSlowIntentCommits: a commit that intents waited for
// longer than slowCommit is logged, since the proxy held writes as long.
func TestCommitter_LogsSlowIntentCommits(t *testing.T) {
	var logs bytes.Buffer
	f := &fakeWriter{delay: slowCommit + 50*time.Millisecond}
	c := newCommitter(f.write, Options{CommitWindow: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer c.close()
	w := writes{decisions: c}
	require.NoError(t, w.Confirm(context.Background(), 1), "the fake writer takes anything")
	require.NotContains(t, logs.String(), "slow", "nobody waited for a confirmation")
	_, err := w.Intend(context.Background(), []Entry{entry("t", "1", "s")})
	require.NoError(t, err)
	require.Contains(t, logs.String(), "a commit of intents was slow")
}
