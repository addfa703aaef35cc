package translog

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	merkle "golang.org/x/mod/sumdb/tlog"
)

// MemoryStorage is a Storage in memory, for tests and benchmarks. The zero
// value is an empty log, ready to use.
type MemoryStorage struct {
	mu          sync.RWMutex
	records     [][]byte
	hashes      []Hash // by stored hash index
	checkpoints map[int64][]byte
	latest      int64 // largest size in checkpoints, when there are any
}

var _ Storage = (*MemoryStorage)(nil)

// Append adds record under the storage's lock (see Storage.Append).
func (m *MemoryStorage) Append(ctx context.Context, record []byte, hashes func(n int64, r HashReader) ([]Hash, error)) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int64(len(m.records))
	hs, err := hashes(n, merkle.HashReaderFunc(m.readHashesLocked))
	if err != nil {
		return 0, err
	}
	if want := merkle.StoredHashCount(n+1) - merkle.StoredHashIndex(0, n); int64(len(hs)) != want {
		return 0, fmt.Errorf("tlog: record %d comes with %d stored hashes, want %d", n, len(hs), want)
	}
	m.records = append(m.records, bytes.Clone(record))
	m.hashes = append(m.hashes, hs...)
	return n, nil
}

// ReadHashes returns the hashes at indexes.
func (m *MemoryStorage) ReadHashes(ctx context.Context, indexes []int64) ([]Hash, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.readHashesLocked(indexes)
}

func (m *MemoryStorage) readHashesLocked(indexes []int64) ([]Hash, error) {
	out := make([]Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(m.hashes)) {
			return nil, fmt.Errorf("tlog: no stored hash at index %d", x)
		}
		out[i] = m.hashes[x]
	}
	return out, nil
}

// ReadRecord returns record n.
func (m *MemoryStorage) ReadRecord(ctx context.Context, n int64) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if n < 0 || n >= int64(len(m.records)) {
		return nil, fmt.Errorf("tlog: no record %d in a log of %d", n, len(m.records))
	}
	return bytes.Clone(m.records[n]), nil
}

// Size returns the number of records.
func (m *MemoryStorage) Size(ctx context.Context) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.records)), nil
}

// PutCheckpoint stores the checkpoint of size, once.
func (m *MemoryStorage) PutCheckpoint(ctx context.Context, size int64, note []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.checkpoints[size]; ok {
		if !bytes.Equal(old, note) {
			return fmt.Errorf("tlog: a different checkpoint of size %d is already stored", size)
		}
		return nil
	}
	if m.checkpoints == nil {
		m.checkpoints = map[int64][]byte{}
	}
	m.checkpoints[size] = bytes.Clone(note)
	if len(m.checkpoints) == 1 || size > m.latest {
		m.latest = size
	}
	return nil
}

// Checkpoint returns the checkpoint of size, or nil.
func (m *MemoryStorage) Checkpoint(ctx context.Context, size int64) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return bytes.Clone(m.checkpoints[size]), nil
}

// LatestCheckpoint returns the checkpoint of the largest size, or nil.
func (m *MemoryStorage) LatestCheckpoint(ctx context.Context) (int64, []byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.checkpoints) == 0 {
		return 0, nil, nil
	}
	return m.latest, bytes.Clone(m.checkpoints[m.latest]), nil
}
