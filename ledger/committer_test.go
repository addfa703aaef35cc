package ledger

import (
	"context"
	"errors"
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
	// perRequest is the time each request takes (an intent's
	// confirmation expanding into indexed rows).
	perRequest time.Duration
	// confirming, when set, is closed as the first confirmation runs.
	confirming  chan struct{}
	confirmOnce sync.Once
}

func (f *fakeWriter) write(ctx context.Context, now time.Time, batch []*request, yield func() bool) (int, error) {
	time.Sleep(f.delay) // an fsync
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range batch {
		if f.poison != "" && r.kind == opIntend && len(r.entries) > 0 && r.entries[0].RecordID == f.poison {
			return 0, errors.New("disk says no")
		}
	}
	n := 0
	for _, r := range batch {
		if n > 0 && yield != nil && yield() {
			break
		}
		if r.kind == opConfirm && f.confirming != nil {
			f.confirmOnce.Do(func() { close(f.confirming) })
		}
		time.Sleep(f.perRequest)
		f.next++
		r.id = f.next
		n++
	}
	f.batches = append(f.batches, batch[:n:n])
	return n, nil
}

func intendConcurrently(c *committer, ids []string) ([]IntentID, []error) {
	out := make([]IntentID, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = writes{c}.Intend(context.Background(), []Entry{entry("t", id, "s")})
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

// TestCommitter_IntentsGoBeforeQueuedDecisions: an intent queued behind a
// long run of confirmations is committed before the rest of them, not after
// the whole batch; the confirmations all commit.
func TestCommitter_IntentsGoBeforeQueuedDecisions(t *testing.T) {
	f := &fakeWriter{perRequest: 20 * time.Millisecond, confirming: make(chan struct{})}
	// The window gathers every confirmation into one batch, which only
	// yielding can then interrupt.
	c := newCommitter(f.write, Options{CommitWindow: 50 * time.Millisecond})
	defer c.close()
	ctx := context.Background()
	w := writes{c}
	ids, errs := intendConcurrently(c, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"})
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
	<-f.confirming
	_, err := w.Intend(ctx, []Entry{entry("t", "late", "s")})
	require.NoError(t, err)
	wg.Wait()

	f.mu.Lock()
	defer f.mu.Unlock()
	var order []opKind // every committed request, in commit order
	late := -1
	for _, b := range f.batches {
		for _, r := range b {
			if r.kind == opIntend && r.entries[0].RecordID == "late" {
				late = len(order)
			}
			order = append(order, r.kind)
		}
	}
	require.Equal(t, 2*len(ids)+1, len(order))
	confirmsAfter := 0
	for _, k := range order[late+1:] {
		if k == opConfirm {
			confirmsAfter++
		}
	}
	require.Positive(t, confirmsAfter, "the late intent was committed after every queued confirmation")
}
