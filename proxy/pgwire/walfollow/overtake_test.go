package walfollow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// orderLog passes changes to a ledger and notes, call by call, the record
// ids each wrote. Every ObserveNoSync waits until the follower has read
// readRows changes (rows, set once the follower runs), so that a test
// knows what the session has read before a batch is written; and, when
// failAfter is set, the first one after a call that wrote that record is
// refused.
type orderLog struct {
	ledger.Observer
	readRows  int64
	rows      atomic.Pointer[atomic.Int64]
	failAfter string

	mu     sync.Mutex
	failed bool
	calls  [][]string
}

// awaitRead waits until the follower has read readRows changes.
func (l *orderLog) awaitRead(ctx context.Context) error {
	for {
		if rows := l.rows.Load(); rows != nil && rows.Load() >= l.readRows {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
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
	fail := l.failAfter != "" && !l.failed && l.firstWrite(l.failAfter) >= 0
	if fail {
		l.mu.Lock()
		l.failed = true
		l.mu.Unlock()
		return fmt.Errorf("%w: test ledger down", ledger.ErrUnavailable)
	}
	if err := l.awaitRead(ctx); err != nil {
		return err
	}
	l.note(c)
	return l.Observer.ObserveNoSync(ctx, c)
}

// firstWrite is where id was first written, counting every record id
// of every call in order; -1 if it was not.
func (l *orderLog) firstWrite(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ids := range l.calls {
		if i := slices.Index(ids, id); i >= 0 {
			return n + i
		}
		n += len(ids)
	}
	return -1
}

// TestFollower_LaterCommitsOvertakeABigTransaction: behind a transaction
// of many batches on a ledger that lags, a row committed after it in another
// record is in the ledger before the big one's last rows; a delete of one
// of the big one's rows waits for it, and so does everything after that
// delete. A ledger error in the middle, once the overtaking row is in,
// ends the session; the next one reads them all again, and the ledger
// ends as the commits' order leaves it.
func TestFollower_LaterCommitsOvertakeABigTransaction(t *testing.T) {
	for _, failAfter := range []string{"", "c1"} {
		t.Run(fmt.Sprint("failing after ", failAfter), func(t *testing.T) {
			f := newFixture(t, docsDDL, docsRules()...)
			// No batch is written before the follower has read Bob's
			// 1,000 rows, Carol's and the delete: whatever the host's
			// speed, Bob's transaction is then read in full and held, and
			// Carol's behind it.
			l := &orderLog{Observer: f.ledger, readRows: 1002, failAfter: failAfter}
			fl := f.run(Config{Ledger: l, MaxBatch: 100, FlushInterval: 20 * time.Millisecond}, 0)
			l.rows.Store(&fl.Stats.Rows)

			// Each statement its own transaction, committed one after
			// the other while the follower is still on the first.
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) SELECT 'b' || g, 'bob' FROM generate_series(1, 1000) g`)
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) VALUES ('c1', 'carol')`)
			f.exec(`DELETE FROM ` + f.schema + `.docs WHERE id = 'b500'`)
			f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) VALUES ('d1', 'dave')`)
			f.awaitCommitted()

			bobLast := l.firstWrite("b1000")
			require.NotEqual(t, -1, bobLast)
			require.Less(t, l.firstWrite("c1"), bobLast, "carol's row overtook the big transaction: %v", l.calls)
			if failAfter == "" {
				// After a restart the session may write the batch holding
				// b500 before it looks for overtakers; the delete then
				// rightly overtakes the rest of Bob's rows, and Dave's with
				// it. Only the first session is sure to hold b500.
				require.Greater(t, l.firstWrite("d1"), bobLast, "dave's row waited behind the delete of one of bob's")
			}

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
