package translog_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
	merkle "golang.org/x/mod/sumdb/tlog"
)

// storageOpener makes a fresh, empty storage and returns a function that
// opens a handle on it; every call opens another handle on the same
// storage (another process sharing the ledger, for the databases).
type storageOpener func(t *testing.T) (open func(t *testing.T) translog.Storage)

func memoryStorage(t *testing.T) func(t *testing.T) translog.Storage {
	s := &translog.MemoryStorage{}
	return func(*testing.T) translog.Storage { return s }
}

func TestLog_Memory(t *testing.T) { runLogSuite(t, memoryStorage) }

// runLogSuite is the behaviour of a Log over any Storage.
func runLogSuite(t *testing.T, newStorage storageOpener) {
	ctx := context.Background()
	fresh := func(t *testing.T) *translog.Log { return newLog(t, newStorage(t)(t)) }

	t.Run("AppendReturnsIndexes_RecordsReadBack", func(t *testing.T) {
		l := fresh(t)
		appendRecords(t, l, 0, 5)
		n, err := l.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(5), n)
		for i := range 5 {
			got, err := l.Record(ctx, int64(i))
			require.NoError(t, err)
			require.Equal(t, record(i), got)
		}
		_, err = l.Record(ctx, 5)
		require.Error(t, err)
	})

	t.Run("EmptyRecordIsARecord", func(t *testing.T) {
		l := fresh(t)
		n, err := l.Append(ctx, nil)
		require.NoError(t, err)
		got, err := l.Record(ctx, n)
		require.NoError(t, err)
		require.Empty(t, got)
		cp := sign(t, l)
		proof, err := l.InclusionProof(ctx, n, cp.Size)
		require.NoError(t, err)
		require.NoError(t, translog.VerifyInclusion(cp, n, []byte{}, proof))
	})

	t.Run("InclusionForEveryIndex_ConsistencyForEveryPair_Sizes0To40", func(t *testing.T) {
		l := fresh(t)
		cps := []translog.Checkpoint{sign(t, l)} // cps[size]
		for size := 1; size <= 40; size++ {
			appendRecords(t, l, size-1, size)
			cp := sign(t, l)
			require.Equal(t, int64(size), cp.Size)
			cps = append(cps, cp)
			for i := range int64(size) {
				proof, err := l.InclusionProof(ctx, i, cp.Size)
				require.NoError(t, err)
				require.NoError(t, translog.VerifyInclusion(cp, i, record(int(i)), proof), "record %d in tree %d", i, size)
				require.ErrorIs(t, translog.VerifyInclusion(cp, i, record(int(i)+1), proof), translog.ErrNotIncluded)
			}
		}
		for older := range cps {
			for newer := older; newer < len(cps); newer++ {
				proof, err := l.ConsistencyProof(ctx, int64(older), int64(newer))
				require.NoError(t, err)
				require.NoError(t, translog.VerifyConsistency(cps[older], cps[newer], proof), "%d → %d", older, newer)
				if newer > older {
					require.ErrorIs(t, translog.VerifyConsistency(cps[newer], cps[older], proof), translog.ErrTruncated)
				}
			}
		}
	})

	t.Run("SignTwiceAtOneSizeReturnsTheStoredCheckpoint", func(t *testing.T) {
		l := fresh(t)
		appendRecords(t, l, 0, 3)
		first := sign(t, l)
		require.Equal(t, first, sign(t, l))
		again := newLog(t, newStorage(t)(t)) // a fresh store signs the same tree identically
		appendRecords(t, again, 0, 3)
		require.Equal(t, first.Root, sign(t, again).Root)
	})

	t.Run("ProofArgumentsOutsideTheLogAreRefused", func(t *testing.T) {
		l := fresh(t)
		appendRecords(t, l, 0, 4)
		for _, c := range []struct{ index, size int64 }{{-1, 4}, {4, 4}, {0, 5}, {0, 0}} {
			_, err := l.InclusionProof(ctx, c.index, c.size)
			require.Error(t, err, "inclusion %+v", c)
		}
		for _, c := range []struct{ older, newer int64 }{{-1, 4}, {3, 2}, {2, 5}} {
			_, err := l.ConsistencyProof(ctx, c.older, c.newer)
			require.Error(t, err, "consistency %+v", c)
		}
	})

	// Sign's refusals: the storage is altered behind the log's back,
	// either by planting a checkpoint the stored tree does not match or
	// by changing stored hashes after a checkpoint was signed.
	t.Run("SignRefuses", func(t *testing.T) {
		plant := func(size int64, note func(t *testing.T) []byte) func(t *testing.T, s translog.Storage) translog.Storage {
			return func(t *testing.T, s translog.Storage) translog.Storage {
				require.NoError(t, s.PutCheckpoint(ctx, size, note(t)))
				return s
			}
		}
		forked := func(size int) func(t *testing.T) []byte {
			return func(t *testing.T) []byte { return forkedCheckpoint(t, size).Note }
		}
		cases := []struct {
			name    string
			records int
			alter   func(t *testing.T, s translog.Storage) translog.Storage
			want    error
		}{
			{"ACheckpointOfTheSameSizeWithAnotherRoot", 3, plant(3, forked(3)), translog.ErrForked},
			{"ATreeThatDoesNotExtendTheLatestCheckpoint", 5, plant(3, forked(3)), translog.ErrForked},
			{"WhenRecordsWereLost", 3, plant(5, forked(5)), translog.ErrTruncated},
			{"WhenRecordsWereLostBackToASignedSize", 3, func(t *testing.T, s translog.Storage) translog.Storage {
				sign(t, newLog(t, s)) // size 3, honestly; then size 5 was signed and records 3 and 4 lost
				return plant(5, forked(5))(t, s)
			}, translog.ErrTruncated},
			{"OverAnotherLogsCheckpoint", 3, plant(2, func(t *testing.T) []byte {
				other, err := translog.New(&translog.MemoryStorage{}, otherKey.signer, "other.example/log")
				require.NoError(t, err)
				appendRecords(t, other, 0, 2)
				cp, err := other.Sign(ctx)
				require.NoError(t, err)
				return cp.Note
			}), translog.ErrOriginMismatch},
			{"WhenStoredHashesChangedSinceTheLastCheckpoint", 3, func(t *testing.T, s translog.Storage) translog.Storage {
				sign(t, newLog(t, s)) // size 3, honestly
				appendRecords(t, newLog(t, s), 3, 5)
				return alteredHash{s, merkle.StoredHashIndex(1, 0)} // the node over records 0 and 1
			}, translog.ErrForked},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := newStorage(t)(t)
				appendRecords(t, newLog(t, s), 0, c.records)
				altered := c.alter(t, s)
				_, before, err := s.LatestCheckpoint(ctx)
				require.NoError(t, err)
				_, err = newLog(t, altered).Sign(ctx)
				require.ErrorIs(t, err, c.want)
				_, after, err := s.LatestCheckpoint(ctx)
				require.NoError(t, err)
				require.Equal(t, before, after, "nothing new was signed")
			})
		}
	})

	t.Run("ConcurrentAppendersBuildOneConsistentTree", func(t *testing.T) {
		open := newStorage(t)
		const writers, each = 6, 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			indexOf = map[string]int64{}
		)
		for w := range writers {
			l := newLog(t, open(t)) // own handle: another proxy
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					rec := record(w*each + i)
					n, err := l.Append(ctx, rec)
					if !assertNoError(t, err) {
						return
					}
					mu.Lock()
					indexOf[string(rec)] = n
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		l := newLog(t, open(t))
		cp := sign(t, l)
		require.Equal(t, int64(writers*each), cp.Size)
		require.Len(t, indexOf, writers*each)

		// The same records appended one by one in index order give the
		// same tree: no append interleaved with another.
		byIndex := make([][]byte, cp.Size)
		for rec, n := range indexOf {
			require.Nil(t, byIndex[n], "index %d handed out twice", n)
			byIndex[n] = []byte(rec)
		}
		ref := newLog(t, &translog.MemoryStorage{})
		for _, rec := range byIndex {
			_, err := ref.Append(ctx, rec)
			require.NoError(t, err)
		}
		require.Equal(t, sign(t, ref).Root, cp.Root)
		for n, rec := range byIndex {
			proof, err := l.InclusionProof(ctx, int64(n), cp.Size)
			require.NoError(t, err)
			require.NoError(t, translog.VerifyInclusion(cp, int64(n), rec, proof))
		}
	})
}

// assertNoError reports err from a goroutine other than the test's.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}

func TestNew_RefusesAKeyNotNamedAfterTheOrigin(t *testing.T) {
	_, err := translog.New(&translog.MemoryStorage{}, otherKey.signer, testOrigin)
	require.ErrorContains(t, err, "generate the key with the origin as its name")
	_, err = translog.New(&translog.MemoryStorage{}, logKey.signer, "")
	require.Error(t, err)
}

// alteredHash is a storage whose stored hash at index reads back changed,
// as after someone edited the database.
type alteredHash struct {
	translog.Storage
	index int64
}

func (a alteredHash) ReadHashes(ctx context.Context, indexes []int64) ([]translog.Hash, error) {
	hs, err := a.Storage.ReadHashes(ctx, indexes)
	for i, x := range indexes {
		if x == a.index && err == nil {
			hs[i][0] ^= 1
		}
	}
	return hs, err
}
