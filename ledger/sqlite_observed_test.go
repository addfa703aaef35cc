package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func observedWrite(id, subject string) Change {
	return Change{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: id, Subjects: []SubjectHash{testHasher.Hash(subject)}}
}

func observedDelete(id string) Change {
	return Change{Kind: ChangeDelete, Store: StorePostgres, Table: "public.docs", RecordID: id}
}

// waitingRows is how many Observe calls wait in observed.
func waitingRows(t *testing.T, l *SQLite) int {
	var n int
	require.NoError(t, l.writer.QueryRow(`SELECT count(*) FROM observed`).Scan(&n))
	return n
}

// TestSQLite_WaitingObservedChangesComeBeforeEverythingLater: the
// follower's changes wait in observed, and still every read sees them and
// every later write of entries lands after them.
func TestSQLite_WaitingObservedChangesComeBeforeEverythingLater(t *testing.T) {
	ctx := context.Background()
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()

	require.NoError(t, l.Observe(ctx, []Change{observedWrite("1", "alice"), observedWrite("2", "alice")}))
	require.NoError(t, l.ObserveNoSync(ctx, []Change{observedDelete("2")}))
	require.Equal(t, 2, waitingRows(t, l), "the changes wait, rather than rewrite the subject index at every batch")

	// The proxy writes record 2 again after the follower saw it deleted:
	// its confirmation lands after the waiting delete.
	again := intend(t, l, entry("public.docs", "2", "alice"))
	require.NoError(t, l.Confirm(ctx, again))
	require.Equal(t, 0, waitingRows(t, l), "a batch of decisions drains first")
	require.Equal(t, []key{{"public.docs", "1", StateConfirmed, 0}, {"public.docs", "2", StateConfirmed, again}}, bySubject(t, l, "alice"))

	// A waiting write is seen by every read, and a later MarkDeleted
	// lands after it.
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("3", "bob")}))
	held, err := l.Holds(ctx, []Entry{entry("public.docs", "3", "bob")})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, held, "Holds")
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("4", "bob")}))
	counts, err := l.Counts(ctx)
	require.NoError(t, err)
	require.Contains(t, counts, TableCount{Store: StorePostgres, Table: "public.docs", State: StateConfirmed, Count: 4}, "Counts")
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("5", "bob")}))
	require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"5"}))
	require.Equal(t, []key{
		{"public.docs", "3", StateConfirmed, 0},
		{"public.docs", "4", StateConfirmed, 0},
		{"public.docs", "5", StateDeleted, 0},
	}, bySubject(t, l, "bob"))
}

// TestSQLite_ObservedChangesWaitingAtCloseAreThereAfterOpen: a handle
// closed (or killed) with changes waiting leaves them to the next one.
func TestSQLite_ObservedChangesWaitingAtCloseAreThereAfterOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("1", "alice")}))
	require.Equal(t, 1, waitingRows(t, l))
	require.NoError(t, l.Close())

	l, err = OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, []key{{"public.docs", "1", StateConfirmed, 0}}, bySubject(t, l, "alice"))
	require.Equal(t, 0, waitingRows(t, l))
}

// TestSQLite_ObserveDrainsWhenTooManyChangesWaitOrTheOldestWaitedLong:
// what waits is bounded even when nobody reads.
func TestSQLite_ObserveDrainsWhenTooManyChangesWaitOrTheOldestWaitedLong(t *testing.T) {
	ctx := context.Background()
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	l.observed.maxChanges, l.observed.maxAge = 4, time.Hour
	inEntries := func() int {
		var n int
		require.NoError(t, l.writer.QueryRow(`SELECT count(*) FROM entries`).Scan(&n))
		return n
	}

	require.NoError(t, l.Observe(ctx, []Change{observedWrite("1", "alice"), observedWrite("2", "alice")}))
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("3", "alice"), observedWrite("4", "alice")}))
	require.Equal(t, 2, waitingRows(t, l), "four changes wait")
	require.NoError(t, l.ObserveNoSync(ctx, []Change{observedWrite("5", "alice")}))
	require.Equal(t, 0, waitingRows(t, l), "a fifth would be too many")
	require.Equal(t, 5, inEntries())

	l.observed.maxChanges, l.observed.maxAge = 1000, 20*time.Millisecond
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("6", "alice")}))
	require.Equal(t, 1, waitingRows(t, l))
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("7", "alice")}))
	require.Equal(t, 0, waitingRows(t, l), "the oldest waited too long")
	require.Equal(t, 7, inEntries())
}

func TestChangesBlob_RoundTrip(t *testing.T) {
	in := []Change{
		observedWrite("1", "alice"),
		{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: "2", Subjects: []SubjectHash{testHasher.Hash("a"), testHasher.Hash("b")}},
		{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: "3", Subjects: []SubjectHash{}},
		observedDelete("1"),
		{Kind: ChangeTruncate, Store: StorePostgres, Table: "public.notes"},
		{Kind: ChangeWrite, Store: StorePinecone, Table: "idx/ns", RecordID: "v\x00é", Subjects: []SubjectHash{testHasher.Hash("c")}},
	}
	blob := encodeChanges(in)
	out, err := decodeChanges(blob)
	require.NoError(t, err)
	require.Equal(t, in, out)
	for i := range blob {
		_, err := decodeChanges(blob[:i])
		require.ErrorIs(t, err, errBadChanges, "cut at %d", i)
	}
}

// FuzzDecodeChanges: a corrupt blob is an error, never a panic or a huge
// allocation, and what decodes encodes back to the same changes.
func FuzzDecodeChanges(f *testing.F) {
	f.Add(encodeChanges([]Change{observedWrite("1", "alice"), observedDelete("1")}))
	f.Add(encodeChanges([]Change{{Kind: ChangeTruncate, Store: StorePostgres, Table: "t"}}))
	f.Add([]byte{1, 1, 0x0c})
	f.Fuzz(func(t *testing.T, b []byte) {
		changes, err := decodeChanges(b)
		if err != nil {
			return
		}
		again, err := decodeChanges(encodeChanges(changes))
		require.NoError(t, err)
		require.Equal(t, changes, again)
	})
}

// TestSQLite_ObserveBesideReadsAndDecisions: the follower's batches,
// the proxy's intents and confirmations, and reads run side by side,
// with drains every few batches; nothing deadlocks and nothing is lost.
func TestSQLite_ObserveBesideReadsAndDecisions(t *testing.T) {
	ctx := context.Background()
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	// Closed at the end, not deferred: a Close deferred would wait on
	// stuck writers while the panic below unwinds.
	l.observed.mu.Lock()
	l.observed.maxChanges = 25
	l.observed.mu.Unlock()
	const batches, perBatch, intents = 40, 10, 40
	done := make(chan struct{})
	errs := make(chan error, 3)
	go func() { // the follower
		for i := range batches {
			changes := make([]Change, perBatch)
			for j := range changes {
				changes[j] = observedWrite(fmt.Sprintf("o-%03d-%02d", i, j), "alice")
			}
			observe := l.ObserveNoSync
			if i%3 == 0 {
				observe = l.Observe
			}
			if err := observe(ctx, changes); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() { // the proxy
		for i := range intents {
			id, err := l.Intend(ctx, []Entry{entry("public.docs", fmt.Sprintf("p-%03d", i), "alice")})
			if err == nil {
				err = l.Confirm(ctx, id)
			}
			if err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() { // readers
		for {
			select {
			case <-done:
				errs <- nil
				return
			default:
			}
			if _, err := l.BySubject(ctx, testHasher.Hash("alice")); err != nil {
				errs <- err
				return
			}
			if _, err := l.Counts(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	wait := func() {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(time.Minute):
			// A panic, not t.Fatal: it ends the test binary with every
			// goroutine's stack, which shows who waits for whom.
			panic("the ledger's writers are stuck (a lock taken in two orders?)")
		}
	}
	wait()
	wait()
	close(done)
	wait()

	recs := bySubject(t, l, "alice")
	require.Len(t, recs, batches*perBatch+intents)
	for _, r := range recs {
		require.Equal(t, StateConfirmed, r.State, r.RecordID)
	}
	require.Equal(t, 0, waitingRows(t, l))
	require.NoError(t, l.Close())
}

// TestSQLite_ACorruptWaitingBatchIsAnErrorAndStaysThere: a batch the
// ledger cannot read back fails every read with an error that says so,
// and neither it nor anything after it is lost or half written.
func TestSQLite_ACorruptWaitingBatchIsAnErrorAndStaysThere(t *testing.T) {
	ctx := context.Background()
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	l.observed.maxAge = time.Hour // no drain before the reads below, however slow the host
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("1", "alice")}))
	_, err = l.writer.Exec(`UPDATE observed SET changes = x'01ff'`)
	require.NoError(t, err)
	require.NoError(t, l.Observe(ctx, []Change{observedWrite("2", "alice")}))

	_, err = l.BySubject(ctx, testHasher.Hash("alice"))
	require.ErrorIs(t, err, errBadChanges)
	require.ErrorContains(t, err, "observed changes appended at")
	require.Equal(t, 2, waitingRows(t, l), "both batches are still there")
	var n int
	require.NoError(t, l.writer.QueryRow(`SELECT count(*) FROM entries`).Scan(&n))
	require.Zero(t, n, "the batch after the corrupt one was not written alone")
}
