package walfollow

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// callLog passes changes to a ledger and notes each call's kind ("sync"
// or "nosync"); slow, when set, delays every durable call by that much
// (a busy ledger).
type callLog struct {
	ledger.Observer
	slow  time.Duration
	mu    sync.Mutex
	calls []string
}

func (l *callLog) note(kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, kind)
}

func (l *callLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (l *callLog) Observe(ctx context.Context, c []ledger.Change) error {
	l.note("sync")
	if l.slow > 0 {
		select {
		case <-time.After(l.slow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return l.Observer.Observe(ctx, c)
}

func (l *callLog) ObserveNoSync(ctx context.Context, c []ledger.Change) error {
	l.note("nosync")
	return l.Observer.ObserveNoSync(ctx, c)
}

// run starts a follower with cfg's ledger and batch size over the
// fixture's slot until the test ends.
func (f *fixture) run(cfg Config, statusEvery time.Duration) *Follower {
	f.t.Helper()
	cfg.Name, cfg.Rules, cfg.Core = f.name, f.rules, &testCore{observer: cfg.Ledger.(ledger.Observer)}
	if cfg.ConnString == "" {
		cfg.ConnString = f.connStr
	}
	fl, err := New(cfg)
	require.NoError(f.t, err)
	if statusEvery > 0 {
		fl.statusEvery = statusEvery
	}
	require.NoError(f.t, fl.Prepare(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(ctx) }()
	f.t.Cleanup(func() { cancel(); <-done })
	return fl
}

func (f *fixture) awaitCommitted() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(f.t, AwaitCommitted(ctx, f.conn, f.name, f.ledger))
}

// TestFollower_BigTransactionIsFsyncedOnceAtItsEnd: a transaction read in
// many batches goes to the ledger without a fsync until its last batch,
// and the slot moves past it once that one is durable, with every row in
// the ledger.
func TestFollower_BigTransactionIsFsyncedOnceAtItsEnd(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	l := &callLog{Observer: f.ledger}
	fl := f.run(Config{Ledger: l, MaxBatch: 100, FlushInterval: 20 * time.Millisecond}, 0)

	f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) VALUES ('a1', 'alice')`)
	f.awaitCommitted()
	before := len(l.seen())
	f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) SELECT 'b' || g, 'bob' FROM generate_series(1, 1000) g`)
	f.awaitCommitted()

	calls := l.seen()[before:]
	require.GreaterOrEqual(t, len(calls), 10, "1000 rows in batches of 100: %v", calls)
	require.Equal(t, "sync", calls[len(calls)-1], "the batch that ends the transaction is durable: %v", calls)
	require.Equal(t, 1, countOf(calls, "sync"), "one fsync for the whole transaction: %v", calls)
	require.Equal(t, 1000, len(f.records("bob")), "every row in the ledger")
	require.Equal(t, int64(1001), fl.Stats.Recorded.Load(), "every change counted once durable")
	require.Equal(t, int64(1001), fl.Stats.Rows.Load(), "each row read once: the session never restarted")
}

// TestFollower_ServerHearsFromItWhileTheLedgerWrites: a ledger write that
// takes longer than the server's wal_sender_timeout does not end the
// replication connection: the session keeps reading and reporting while
// the write runs. Before, the session was silent meanwhile and the server
// ended it, and the rows were read again by the next session.
func TestFollower_ServerHearsFromItWhileTheLedgerWrites(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	// The write outlasts the timeout several times over; the follower
	// reports every 100 ms, far inside it even on a loaded host.
	l := &callLog{Observer: f.ledger, slow: 8 * time.Second}
	fl := f.run(Config{ConnString: f.connStr + " wal_sender_timeout=2s", Ledger: l, MaxBatch: 100, FlushInterval: 20 * time.Millisecond},
		100*time.Millisecond)

	for i := range 3 {
		f.exec(`INSERT INTO `+f.schema+`.docs (id, owner) VALUES ($1, 'alice')`, fmt.Sprint("a", i))
	}
	f.awaitCommitted()
	require.Len(t, f.records("alice"), 3)
	require.Equal(t, int64(3), fl.Stats.Rows.Load(), "each row read once: the server never ended the session")
}

// failFirstNoSync refuses its first ObserveNoSync.
type failFirstNoSync struct {
	ledger.Observer
	failed atomic.Bool
}

func (l *failFirstNoSync) ObserveNoSync(ctx context.Context, c []ledger.Change) error {
	if l.failed.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: test ledger down", ledger.ErrUnavailable)
	}
	return l.Observer.ObserveNoSync(ctx, c)
}

// TestFollower_AFailedBatchMidTransactionIsReadAgain: a ledger error on a
// batch written in the background ends the session like any other, and
// the next session reads the transaction again from the confirmed
// position.
func TestFollower_AFailedBatchMidTransactionIsReadAgain(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	l := &failFirstNoSync{Observer: f.ledger}
	fl := f.run(Config{Ledger: l, MaxBatch: 100, FlushInterval: 20 * time.Millisecond}, 0)

	f.exec(`INSERT INTO ` + f.schema + `.docs (id, owner) SELECT 'b' || g, 'bob' FROM generate_series(1, 1000) g`)
	f.awaitCommitted()
	require.True(t, l.failed.Load(), "a batch in the middle of the transaction was refused")
	require.Equal(t, 1000, len(f.records("bob")), "every row in the ledger")
	require.Greater(t, fl.Stats.Rows.Load(), int64(1000), "the transaction was read again")
	require.Equal(t, int64(1000), fl.Stats.Recorded.Load(), "counted once, when durable")
}

func countOf(calls []string, kind string) int {
	n := 0
	for _, c := range calls {
		if c == kind {
			n++
		}
	}
	return n
}
