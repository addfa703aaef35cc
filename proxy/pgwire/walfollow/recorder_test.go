package walfollow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// crashLedger keeps what ObserveNoSync commits apart until an Observe of
// at least one change makes it durable, as the ledgers do: a crash of the
// machine loses the apart part.
type crashLedger struct {
	mu       sync.Mutex
	volatile []ledger.Change
	durable  []ledger.Change
	calls    []string // "sync" or "nosync", in order
}

func (l *crashLedger) Observe(_ context.Context, c []ledger.Change) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(c) == 0 {
		return nil // as the ledgers: nothing to commit, nothing fsynced
	}
	l.durable = append(append(l.durable, l.volatile...), c...)
	l.volatile = nil
	l.calls = append(l.calls, "sync")
	return nil
}

func (l *crashLedger) ObserveNoSync(_ context.Context, c []ledger.Change) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.volatile = append(l.volatile, c...)
	l.calls = append(l.calls, "nosync")
	return nil
}

// TestRecorder_ConfirmsOnlyWhatADurableObserveCovers drives a recorder as
// a session does, over transactions of many sizes, with its flights
// landing at once or while later changes are read, and checks after every
// step that each transaction ending at or before the confirmable position
// is durable in full; and at the end that everything is durable and
// confirmable.
func TestRecorder_ConfirmsOnlyWhatADurableObserveCovers(t *testing.T) {
	const maxBatch, interval = 10, 50 * time.Millisecond
	sizes := [][]int{
		{1, 25, 3},         // a small transaction, then a big one: they share a batch cut mid-transaction
		{30, 10, 20, 1},    // multiples of the batch: the batch that ends a transaction must not be empty
		{9, 11, 1, 1, 100}, // around the batch size
		{0, 45, 0, 2},      // transactions with no change of a followed table
		{20},               // the last transaction a multiple of the batch: nothing after it to carry the fsync
	}
	landings := map[string]func(step int) bool{
		"at once":          func(int) bool { return true },
		"every third step": func(step int) bool { return step%3 == 0 },
		"only when full":   func(int) bool { return false },
	}
	for _, txs := range sizes {
		for name, landNow := range landings {
			t.Run(fmt.Sprint(txs, " ", name), func(t *testing.T) {
				l := &crashLedger{}
				var r recorder
				var committed pglogrepl.LSN
				ends := map[string]pglogrepl.LSN{} // RecordID → end of its transaction
				now := time.Unix(0, 0)
				step := 0
				var confirmed pglogrepl.LSN

				check := func(what string) {
					t.Helper()
					// The session confirms the greatest position it was given.
					pos := max(confirmed, r.confirmable(committed))
					confirmed = pos
					l.mu.Lock()
					defer l.mu.Unlock()
					durable := map[string]bool{}
					for _, c := range l.durable {
						durable[c.RecordID] = true
					}
					for id, end := range ends {
						if end <= pos {
							require.True(t, durable[id], "%s: position %s confirmable, but change %s of the transaction ending at %s is not durable (calls %v)",
								what, pos, id, end, l.calls)
						}
					}
				}
				advance := func(what string) {
					t.Helper()
					step++
					now = now.Add(time.Millisecond)
					if landNow(step) || r.full(maxBatch) {
						_, err := r.land()
						require.NoError(t, err)
					}
					check(what + " after landing")
					if r.due(now, maxBatch, interval) {
						f, taken := r.cut(now, committed, nil)
						require.Equal(t, f.durable, taken)
						f.run(context.Background(), l, func(context.Context, *flight) error { return nil })
					}
					check(what + " after a cut")
				}

				for i, n := range txs {
					end := pglogrepl.LSN(1000 * (i + 1))
					for j := range n {
						id := fmt.Sprintf("%d/%d", i, j)
						if len(r.batch) == 0 {
							r.batchAt = now
						}
						r.batch = append(r.batch, ledger.Change{Kind: ledger.ChangeWrite, RecordID: id})
						ends[id] = end
						advance("row " + id)
					}
					committed = end
					r.committed()
					advance(fmt.Sprint("commit of ", i))
				}
				for range 1000 {
					if r.confirmable(committed) == committed {
						break
					}
					now = now.Add(interval)
					_, err := r.land() // nothing else to read: the session waits for the landing
					require.NoError(t, err)
					advance("idle")
				}
				require.Equal(t, committed, r.confirmable(committed), "every transaction read is confirmable in the end (calls %v)", l.calls)
				require.Empty(t, l.volatile, "nothing is left without a fsync")
				total := 0
				for _, n := range txs {
					total += n
				}
				require.Len(t, l.durable, total)
				require.True(t, slices.IsSortedFunc(l.durable, func(a, b ledger.Change) int {
					return int(ends[a.RecordID]) - int(ends[b.RecordID])
				}), "changes reach the ledger in the order read")
			})
		}
	}
}

// TestRecorder_FlightsMidTransactionSkipTheFsync: a transaction read in
// many batches is written without a fsync until its end, whose batch is
// durable.
func TestRecorder_FlightsMidTransactionSkipTheFsync(t *testing.T) {
	l := &crashLedger{}
	now := time.Unix(0, 0)
	r := recorder{batchAt: now}
	const end = pglogrepl.LSN(5000)
	for j := range 35 {
		r.batch = append(r.batch, ledger.Change{Kind: ledger.ChangeWrite, RecordID: fmt.Sprint(j)})
		if r.due(now, 10, time.Hour) {
			f, _ := r.cut(now, 0, nil)
			f.run(context.Background(), l, func(context.Context, *flight) error { return nil })
			_, err := r.land()
			require.NoError(t, err)
			require.Equal(t, pglogrepl.LSN(0), r.confirmable(0))
			require.Nil(t, r.takeRecorded(), "the transaction is not recorded before its durable flight lands")
		}
	}
	r.committed()
	require.True(t, r.due(now.Add(time.Hour), 10, time.Hour), "the transaction's end makes the rest due")
	f, _ := r.cut(now, end, nil)
	f.run(context.Background(), l, func(context.Context, *flight) error { return nil })
	_, err := r.land()
	require.NoError(t, err)
	require.Equal(t, []string{"nosync", "nosync", "nosync", "sync"}, l.calls)
	require.Equal(t, end, r.confirmable(end))
	require.Len(t, l.durable, 35)
	long := r.takeRecorded()
	require.NotNil(t, long, "the sums of the transaction, for the log")
	require.Equal(t, 4, long.flights)
	require.Equal(t, 35, long.changes)
	require.Nil(t, r.takeRecorded(), "taken once")
}
