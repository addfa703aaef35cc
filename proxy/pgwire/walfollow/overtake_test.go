package walfollow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// orderLog passes changes to a ledger and notes, call by call, the record
// ids each wrote; every ObserveNoSync takes slow longer (a busy ledger),
// and, when failAfter is set, the first one after a call that wrote that
// record is refused.
type orderLog struct {
	ledger.Observer
	slow      time.Duration
	failAfter string

	mu     sync.Mutex
	failed bool
	calls  [][]string
}

func (l *orderLog) note(c []ledger.Change) {
	ids := make([]string, len(c))
	for i, x := range c {
		ids[i] = x.RecordID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, ids)
}

func (l *orderLog) Observe(ctx context.Context, c []ledger.Change) error {
	l.note(c)
	return l.Observer.Observe(ctx, c)
}

func (l *orderLog) ObserveNoSync(ctx context.Context, c []ledger.Change) error {
	fail := l.failAfter != "" && !l.failed && l.firstCall(l.failAfter) >= 0
	if fail {
		l.mu.Lock()
		l.failed = true
		l.mu.Unlock()
		return fmt.Errorf("%w: test ledger down", ledger.ErrUnavailable)
	}
	time.Sleep(l.slow)
	l.note(c)
	return l.Observer.ObserveNoSync(ctx, c)
}

// firstCall is the index of the first call that wrote id, -1 if none.
func (l *orderLog) firstCall(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.IndexFunc(l.calls, func(ids []string) bool { return slices.Contains(ids, id) })
}

// TestFollower_LaterCommitsOvertakeABigTransaction: behind a transaction
// of many batches on a slow ledger, a row committed after it in another
// record is in the ledger before the big one's last rows; a delete of one
// of the big one's rows waits for it, and so does everything after that
// delete. A ledger error in the middle, once the overtaking row is in,
// ends the session; the next one reads them all again, and the ledger
// ends as the commits' order leaves it.
func TestFollower_LaterCommitsOvertakeABigTransaction(t *testing.T) {
	for _, failAfter := range []string{"", "c1"} {
		t.Run(fmt.Sprint("failing after ", failAfter), func(t *testing.T) {
			f := newFixture(t, docsDDL, docsRules()...)
			// 1,000 rows in batches of 100 take at least a second.
			l := &orderLog{Observer: f.ledger, slow: 100 * time.Millisecond, failAfter: failAfter}
			fl := f.run(Config{Ledger: l, MaxBatch: 100, FlushInterval: 20 * time.Millisecond}, 0)

			// Each statement its own transaction, committed one after
			// the other while the follower is still on the first.
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) SELECT 'b' || g, 'bob' FROM generate_series(1, 1000) g`)
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) VALUES ('c1', 'carol')`)
			f.exec(`DELETE FROM ` + f.schema + `.docs WHERE id = 'b500'`)
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) VALUES ('d1', 'dave')`)
			f.awaitCommitted()

			bobLast := l.firstCall("b1000")
			require.NotEqual(t, -1, bobLast)
			require.Less(t, l.firstCall("c1"), bobLast, "carol's row overtook the big transaction: %v", l.calls)
			require.Greater(t, l.firstCall("d1"), bobLast, "dave's row waited behind the delete of one of bob's")

			bob := f.records("bob")
			require.Len(t, bob, 1000)
			for _, r := range bob {
				want := ledger.StateConfirmed
				if r.ID == "b500" {
					want = ledger.StateDeleted
				}
				require.Equal(t, want, r.State, "record %s", r.ID)
			}
			f.await("carol", record{"docs", "c1", ledger.StateConfirmed})
			f.await("dave", record{"docs", "d1", ledger.StateConfirmed})
			if failAfter != "" {
				require.True(t, l.failed, "a batch after the overtaking row was refused")
				require.Greater(t, fl.Stats.Rows.Load(), int64(1003), "the transactions were read again after the failed batch")
			}
		})
	}
}
