package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"
)

// tlogStore is translog.Storage restated, so that this package's tests do
// not import package translog (its own tests run a translog.Log over both
// backends).
type tlogStore interface {
	Append(ctx context.Context, record []byte, hashes func(n int64, r tlog.HashReader) ([]tlog.Hash, error)) (int64, error)
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	ReadRecord(ctx context.Context, n int64) ([]byte, error)
	Size(ctx context.Context) (int64, error)
	PutCheckpoint(ctx context.Context, size int64, note []byte) error
	Checkpoint(ctx context.Context, size int64) ([]byte, error)
	LatestCheckpoint(ctx context.Context) (int64, []byte, error)
}

var (
	_ tlogStore = (*SQLiteTlog)(nil)
	_ tlogStore = (*PostgresTlog)(nil)
)

func tlogStoreOf(t *testing.T, l Ledger) tlogStore {
	switch l := l.(type) {
	case *SQLite:
		return l.TransparencyLog()
	case *Postgres:
		return l.TransparencyLog()
	}
	t.Fatalf("no transparency log storage for %T", l)
	return nil
}

// appendLeaf appends record with the stored hashes RFC 6962 asks for, as
// translog.Log.Append does.
func appendLeaf(ctx context.Context, s tlogStore, record []byte) (int64, error) {
	return s.Append(ctx, record, func(n int64, r tlog.HashReader) ([]tlog.Hash, error) {
		return tlog.StoredHashes(n, record, r)
	})
}

// storeReader reads s's hashes as an x/mod HashReader.
func storeReader(ctx context.Context, s tlogStore) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) { return s.ReadHashes(ctx, indexes) })
}

// referenceHashes are the stored hashes of a log of records, computed in
// memory.
func referenceHashes(t *testing.T, records [][]byte) []tlog.Hash {
	var all []tlog.Hash
	r := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			out[i] = all[x]
		}
		return out, nil
	})
	for n, rec := range records {
		hs, err := tlog.StoredHashes(int64(n), rec, r)
		require.NoError(t, err)
		all = append(all, hs...)
	}
	return all
}

// requireStoredTree checks that s holds exactly records and their hashes.
func requireStoredTree(t *testing.T, s tlogStore, records [][]byte) {
	ctx := context.Background()
	size, err := s.Size(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(len(records)), size)
	for n, rec := range records {
		got, err := s.ReadRecord(ctx, int64(n))
		require.NoError(t, err)
		require.Equal(t, rec, got)
	}
	want := referenceHashes(t, records)
	indexes := make([]int64, len(want))
	for i := range indexes {
		indexes[i] = int64(i)
	}
	got, err := s.ReadHashes(ctx, indexes)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func tlogRecord(i int) []byte { return []byte(fmt.Sprintf("event %d", i)) }

// runTlogStoreContract is the behaviour of the transparency log's storage
// in every backend (the contract of translog.Storage).
func runTlogStoreContract(t *testing.T, b backend) {
	ctx := context.Background()
	fresh := func(t *testing.T) tlogStore {
		open, _ := b.newStore(t)
		l := open(t)
		t.Cleanup(func() { l.Close() })
		return tlogStoreOf(t, l)
	}

	t.Run("AppendStoresRecordsAndRFC6962Hashes", func(t *testing.T) {
		s := fresh(t)
		var records [][]byte
		for i := range 20 {
			n, err := appendLeaf(ctx, s, tlogRecord(i))
			require.NoError(t, err)
			require.Equal(t, int64(i), n)
			records = append(records, tlogRecord(i))
		}
		requireStoredTree(t, s, records)

		// Hashes come back in the order asked, duplicates included.
		ref := referenceHashes(t, records)
		got, err := s.ReadHashes(ctx, []int64{7, 2, 7, 0})
		require.NoError(t, err)
		require.Equal(t, []tlog.Hash{ref[7], ref[2], ref[7], ref[0]}, got)
		got, err = s.ReadHashes(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
		root, err := tlog.TreeHash(20, storeReader(ctx, s))
		require.NoError(t, err)
		proof, err := tlog.ProveRecord(20, 13, storeReader(ctx, s))
		require.NoError(t, err)
		require.NoError(t, tlog.CheckRecord(proof, 20, root, 13, tlog.RecordHash(tlogRecord(13))))
	})

	t.Run("NilRecordIsStoredEmpty", func(t *testing.T) {
		s := fresh(t)
		n, err := appendLeaf(ctx, s, nil)
		require.NoError(t, err)
		got, err := s.ReadRecord(ctx, n)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("MissingRecordOrHashIsAnErrorNotUnavailability", func(t *testing.T) {
		s := fresh(t)
		_, err := appendLeaf(ctx, s, tlogRecord(0))
		require.NoError(t, err)
		_, err = s.ReadRecord(ctx, 1)
		require.ErrorContains(t, err, "no record 1")
		require.NotErrorIs(t, err, ErrUnavailable)
		_, err = s.ReadHashes(ctx, []int64{0, 5})
		require.ErrorContains(t, err, "no stored hash at index 5")
		require.NotErrorIs(t, err, ErrUnavailable)
	})

	t.Run("FailedAppendWritesNothing", func(t *testing.T) {
		s := fresh(t)
		_, err := appendLeaf(ctx, s, tlogRecord(0))
		require.NoError(t, err)
		boom := errors.New("boom")
		_, err = s.Append(ctx, tlogRecord(1), func(int64, tlog.HashReader) ([]tlog.Hash, error) { return nil, boom })
		require.ErrorIs(t, err, boom)
		_, err = s.Append(ctx, tlogRecord(1), func(n int64, r tlog.HashReader) ([]tlog.Hash, error) {
			// Record 1 completes a subtree: it must store two hashes.
			return []tlog.Hash{tlog.RecordHash(tlogRecord(1))}, nil
		})
		require.ErrorContains(t, err, "comes with 1 stored hashes, want 2")
		requireStoredTree(t, s, [][]byte{tlogRecord(0)})
	})

	t.Run("OneCheckpointPerSizeEver", func(t *testing.T) {
		s := fresh(t)
		size, note, err := s.LatestCheckpoint(ctx)
		require.NoError(t, err)
		require.Nil(t, note)
		require.Zero(t, size)
		require.NoError(t, s.PutCheckpoint(ctx, 3, []byte("note at 3")))
		require.NoError(t, s.PutCheckpoint(ctx, 3, []byte("note at 3")), "storing the same checkpoint again is idempotent")
		err = s.PutCheckpoint(ctx, 3, []byte("another note at 3"))
		require.ErrorContains(t, err, "different transparency log checkpoint of size 3")
		require.NotErrorIs(t, err, ErrUnavailable)
		got, err := s.Checkpoint(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, []byte("note at 3"), got)
		got, err = s.Checkpoint(ctx, 4)
		require.NoError(t, err)
		require.Nil(t, got)

		require.NoError(t, s.PutCheckpoint(ctx, 1, []byte("note at 1")))
		size, note, err = s.LatestCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), size)
		require.Equal(t, []byte("note at 3"), note)
		require.NoError(t, s.PutCheckpoint(ctx, 7, []byte("note at 7")))
		size, note, err = s.LatestCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(7), size)
		require.Equal(t, []byte("note at 7"), note)
	})

	t.Run("ConcurrentAppendersInTwoHandlesDoNotInterleave", func(t *testing.T) {
		open, _ := b.newStore(t)
		const handles, writers, each = 2, 3, 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			byIndex = map[int64][]byte{}
		)
		for h := range handles {
			l := open(t) // another proxy sharing the ledger
			defer l.Close()
			s := tlogStoreOf(t, l)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						rec := tlogRecord((h*writers+w)*each + i)
						n, err := appendLeaf(ctx, s, rec)
						if err != nil {
							t.Errorf("append: %v", err)
							return
						}
						mu.Lock()
						byIndex[n] = rec
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		records := make([][]byte, len(byIndex))
		for n, rec := range byIndex {
			require.Less(t, n, int64(len(records)))
			records[n] = rec
		}
		require.Len(t, records, handles*writers*each)
		l := open(t)
		defer l.Close()
		requireStoredTree(t, tlogStoreOf(t, l), records)
	})

	t.Run("SurvivesReopen", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		s := tlogStoreOf(t, l)
		for i := range 3 {
			_, err := appendLeaf(ctx, s, tlogRecord(i))
			require.NoError(t, err)
		}
		require.NoError(t, s.PutCheckpoint(ctx, 3, []byte("note at 3")))
		require.NoError(t, l.Close())
		l = open(t)
		defer l.Close()
		s = tlogStoreOf(t, l)
		requireStoredTree(t, s, [][]byte{tlogRecord(0), tlogRecord(1), tlogRecord(2)})
		size, note, err := s.LatestCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), size)
		require.Equal(t, []byte("note at 3"), note)
	})

	t.Run("ClosedLedgerIsUnavailable", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		s := tlogStoreOf(t, l)
		require.NoError(t, l.Close())
		_, err := appendLeaf(ctx, s, tlogRecord(0))
		require.ErrorIs(t, err, ErrUnavailable)
		_, err = s.Size(ctx)
		require.ErrorIs(t, err, ErrUnavailable)
		_, err = s.ReadHashes(ctx, []int64{0})
		require.ErrorIs(t, err, ErrUnavailable)
		_, err = s.ReadRecord(ctx, 0)
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorIs(t, s.PutCheckpoint(ctx, 0, []byte("x")), ErrUnavailable)
		_, err = s.Checkpoint(ctx, 0)
		require.ErrorIs(t, err, ErrUnavailable)
		_, _, err = s.LatestCheckpoint(ctx)
		require.ErrorIs(t, err, ErrUnavailable)
	})
}

func TestSQLite_TlogStore(t *testing.T) { runTlogStoreContract(t, sqliteBackend) }

func TestPostgres_TlogStore(t *testing.T) {
	testPGConnString(t)
	runTlogStoreContract(t, pgBackend)
}
