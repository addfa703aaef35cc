package walfollow

import (
	"context"
	"fmt"
	"strings"
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
	discard  // for the slot marks, which the recorder never uses
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

// ledgerState is what a sequence of changes leaves in a ledger: each
// record's subjects, confirmed or deleted, as the ledgers apply them.
func ledgerState(changes []ledger.Change) map[string]string {
	state := map[string]string{}
	for _, c := range changes {
		table := string(c.Store) + "/" + c.Table + "/"
		switch c.Kind {
		case ledger.ChangeWrite:
			for _, s := range c.Subjects {
				state[table+c.RecordID+"/"+s.String()] = "confirmed"
			}
		case ledger.ChangeDelete:
			for k := range state {
				if strings.HasPrefix(k, table+c.RecordID+"/") {
					state[k] = "deleted"
				}
			}
		case ledger.ChangeTruncate:
			for k := range state {
				if strings.HasPrefix(k, table) {
					state[k] = "deleted"
				}
			}
		}
	}
	return state
}

// streamTx is one transaction of a test stream.
type streamTx struct {
	changes []ledger.Change
	end     pglogrepl.LSN
	late    []lateWrite
}

// testStream makes transactions of the given sizes. Their rows are new
// records, but every third transaction deletes a record of the one before
// it, or rewrites one with another subject, some delete a record of the
// first one, and every seventh truncates the second table: transactions
// that may overtake a held one and transactions that must not.
func testStream(sizes []int) []streamTx {
	txs := make([]streamTx, len(sizes))
	for i, n := range sizes {
		tx := &txs[i]
		tx.end = pglogrepl.LSN(1000 * (i + 1))
		for j := range n {
			table := []string{"a", "b"}[j%2]
			c := ledger.Change{Kind: ledger.ChangeWrite, Store: ledger.StorePostgres, Table: table, RecordID: fmt.Sprintf("%d/%d", i, j),
				Subjects: []ledger.SubjectHash{{byte(i), byte(j)}}}
			switch {
			case i > 0 && i%3 == 0 && j == 0 && len(txs[i-1].changes) > 0:
				prev := txs[i-1].changes[0]
				c.Table, c.RecordID = prev.Table, prev.RecordID
				if i%2 == 0 {
					c.Kind, c.Subjects = ledger.ChangeDelete, nil
				}
			case i%5 == 2 && j == 1 && len(txs[0].changes) > 7:
				c.Table, c.RecordID = txs[0].changes[7].Table, txs[0].changes[7].RecordID
				c.Kind, c.Subjects = ledger.ChangeDelete, nil
			case i%7 == 6 && j == 1:
				c = ledger.Change{Kind: ledger.ChangeTruncate, Store: ledger.StorePostgres, Table: "b"}
			}
			tx.changes = append(tx.changes, c)
			if j == n-1 && i%4 == 1 {
				tx.late = append(tx.late, lateWrite{table: c.Table, subject: fmt.Sprint(i)})
			}
		}
	}
	return txs
}

// TestRecorder_ConfirmsOnlyWhatADurableObserveCovers drives a recorder as
// a session does, over transactions of many sizes, with its flights
// landing at once or while later changes are read, and checks after every
// step that each transaction ending at or before the confirmable position
// is durable in full, and that a late write goes to the backstop only with
// its transaction durable; and at the end that everything is durable and
// confirmable, and the ledger is as the stream's order would leave it.
func TestRecorder_ConfirmsOnlyWhatADurableObserveCovers(t *testing.T) {
	const maxBatch, interval = 10, 50 * time.Millisecond
	sizes := [][]int{
		{1, 25, 3},         // a small transaction, then a big one: they share a batch cut mid-transaction
		{30, 10, 20, 1},    // multiples of the batch: the batch that ends a transaction must not be empty
		{9, 11, 1, 1, 100}, // around the batch size
		{0, 45, 0, 2},      // transactions with no change of a followed table
		{20},               // the last transaction a multiple of the batch: nothing after it to carry the fsync
		{100, 2, 3, 4, 5, 6, 7, 1, 1, 1, 30, 2, 2}, // held transactions overtaken, and not
		{500, 1, 2, 3, 2, 1, 2, 3, 2, 1},           // reading ahead of the ledger is bounded
	}
	landings := map[string]func(step int) bool{
		"at once":          func(int) bool { return true },
		"every third step": func(step int) bool { return step%3 == 0 },
		"every 40th step":  func(step int) bool { return step%40 == 0 },
		"only when full":   func(int) bool { return false },
	}
	for _, sz := range sizes {
		txs := testStream(sz)
		var stream []ledger.Change
		for _, tx := range txs {
			stream = append(stream, tx.changes...)
		}
		for name, landNow := range landings {
			t.Run(fmt.Sprint(sz, " ", name), func(t *testing.T) {
				l := &crashLedger{}
				r := recorder{maxBatch: maxBatch}
				var committed pglogrepl.LSN
				now := time.Unix(0, 0)
				step := 0
				var confirmed pglogrepl.LSN
				var backstop []lateWrite
				overtook := 0

				check := func(what string) {
					t.Helper()
					require.LessOrEqual(t, r.pending(), readAhead*maxBatch+1, "%s: reading ahead is bounded", what)
					// The session confirms the greatest position it was given.
					pos := max(confirmed, r.confirmable(committed))
					confirmed = pos
					l.mu.Lock()
					defer l.mu.Unlock()
					durable := map[string]bool{}
					for _, c := range l.durable {
						durable[c.Table+c.RecordID+fmt.Sprint(c.Subjects)] = true
					}
					for _, tx := range txs {
						if tx.end > pos {
							continue
						}
						for _, c := range tx.changes {
							require.True(t, durable[c.Table+c.RecordID+fmt.Sprint(c.Subjects)],
								"%s: position %s confirmable, but a change of the transaction ending at %s is not durable (calls %v)",
								what, pos, tx.end, l.calls)
						}
					}
				}
				afterDurable := func(_ context.Context, f *flight) error {
					l.mu.Lock()
					defer l.mu.Unlock()
					durable := map[string]bool{}
					for _, c := range l.durable {
						durable[c.Table+c.RecordID+fmt.Sprint(c.Subjects)] = true
					}
					for _, w := range f.late {
						var i int
						fmt.Sscan(w.subject, &i)
						for _, c := range txs[i].changes {
							require.True(t, durable[c.Table+c.RecordID+fmt.Sprint(c.Subjects)],
								"a late write of transaction %d goes to the backstop once its transaction is durable", i)
						}
					}
					backstop = append(backstop, f.late...)
					return nil
				}
				advance := func(what string) {
					t.Helper()
					step++
					now = now.Add(time.Millisecond)
					if landNow(step) || r.full() {
						_, err := r.land()
						require.NoError(t, err)
					}
					check(what + " after landing")
					if r.due(now, interval) {
						f := r.cut(now)
						if f.overtakes {
							overtook++
						}
						f.run(context.Background(), &testCore{observer: l}, afterDurable)
					}
					check(what + " after a cut")
				}

				for i, tx := range txs {
					for j, c := range tx.changes {
						for r.full() {
							advance(fmt.Sprintf("waiting to read %d/%d", i, j))
						}
						if len(r.batch) == 0 {
							r.batchAt = now
						}
						r.batch = append(r.batch, c)
						advance(fmt.Sprintf("row %d/%d", i, j))
					}
					committed = tx.end
					r.commit(tx.end, tx.late)
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
				require.ElementsMatch(t, stream, l.durable, "every change is recorded once")
				require.Equal(t, ledgerState(stream), ledgerState(l.durable), "the ledger is as the stream's order leaves it")
				var late []lateWrite
				for _, tx := range txs {
					late = append(late, tx.late...)
				}
				require.ElementsMatch(t, late, backstop, "every late write reaches the backstop once")
				if sz[0] > maxBatch && len(sz) > 5 && name != "at once" && name != "every third step" {
					// The ledger lags: the first transaction is held.
					require.Positive(t, overtook, "later transactions overtake the first one")
				}
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
	r := recorder{batchAt: now, maxBatch: 10}
	const end = pglogrepl.LSN(5000)
	for j := range 35 {
		r.batch = append(r.batch, ledger.Change{Kind: ledger.ChangeWrite, RecordID: fmt.Sprint(j)})
		if r.due(now, time.Hour) {
			f := r.cut(now)
			f.run(context.Background(), &testCore{observer: l}, func(context.Context, *flight) error { return nil })
			_, err := r.land()
			require.NoError(t, err)
			require.Equal(t, pglogrepl.LSN(0), r.confirmable(0))
			require.Nil(t, r.takeRecorded(), "the transaction is not recorded before its durable flight lands")
		}
	}
	r.commit(end, nil)
	require.True(t, r.due(now.Add(time.Hour), time.Hour), "the transaction's end makes the rest due")
	f := r.cut(now)
	f.run(context.Background(), &testCore{observer: l}, func(context.Context, *flight) error { return nil })
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

// TestRecorder_LaterTransactionsOvertakeAHeldOne: behind a transaction
// that fills several flights, a later one touching none of its records is
// recorded first, one deleting a record of it waits for it, and so does
// every one after that; the confirmed position moves only once the held
// transaction is durable.
func TestRecorder_LaterTransactionsOvertakeAHeldOne(t *testing.T) {
	l := &crashLedger{}
	r := recorder{maxBatch: 4}
	write := func(id string) ledger.Change {
		return ledger.Change{Kind: ledger.ChangeWrite, Store: ledger.StorePostgres, Table: "t", RecordID: id, Subjects: []ledger.SubjectHash{{1}}}
	}
	for i := range 6 {
		r.batch = append(r.batch, write(fmt.Sprint("a", i)))
	}
	r.commit(100, []lateWrite{{table: "t", subject: "a"}})
	r.batch = append(r.batch, write("b"))
	r.commit(200, []lateWrite{{table: "t", subject: "b"}})
	r.batch = append(r.batch, ledger.Change{Kind: ledger.ChangeDelete, Store: ledger.StorePostgres, Table: "t", RecordID: "a5"})
	r.commit(300, nil)
	r.batch = append(r.batch, write("d"))
	r.commit(400, nil)

	var order []string
	var confirmable []pglogrepl.LSN
	var late [][]lateWrite
	now := time.Unix(0, 0)
	for {
		now = now.Add(time.Hour) // what is not held waits at most this long
		if !r.due(now, time.Hour) {
			break
		}
		f := r.cut(now)
		for _, c := range f.changes {
			order = append(order, c.RecordID)
		}
		f.run(context.Background(), &testCore{observer: l}, func(_ context.Context, f *flight) error {
			late = append(late, f.late)
			return nil
		})
		_, err := r.land()
		require.NoError(t, err)
		confirmable = append(confirmable, r.confirmable(400))
	}
	require.Equal(t, []string{"b", "a0", "a1", "a2", "a3", "a4", "a5", "a5", "d"}, order)
	require.Equal(t, []string{"nosync", "nosync", "sync", "sync"}, l.calls, "only the end of the held transaction, and what follows it, is fsynced")
	require.Equal(t, []pglogrepl.LSN{0, 0, 200, 400}, confirmable)
	require.Equal(t, [][]lateWrite{{{table: "t", subject: "a"}, {table: "t", subject: "b"}}, nil}, late,
		"late writes wait for the held transaction's last chunk, which makes theirs durable")
}

// TestRecorder_ReadsAheadBounded: while a flight is in the air the session
// reads on, up to readAhead flights' worth of changes.
func TestRecorder_ReadsAheadBounded(t *testing.T) {
	r := recorder{maxBatch: 10}
	r.batch = append(r.batch, ledger.Change{RecordID: "x"}, ledger.Change{RecordID: "y"})
	r.commit(1, nil)
	r.cut(time.Unix(0, 0)) // in the air, never landing
	for range readAhead * 10 {
		require.False(t, r.full())
		r.batch = append(r.batch, ledger.Change{RecordID: "z"})
	}
	require.True(t, r.full())
}
