package ledger

import (
	"fmt"
	"hash/fnv"

	"golang.org/x/mod/sumdb/tlog"
)

// The transparency log's storage. Package translog defines the contract
// (translog.Storage); SQLiteTlog and PostgresTlog satisfy it structurally,
// using golang.org/x/mod/sumdb/tlog's types, so that this package does not
// import package translog and dependencies keep pointing from the engine to
// both. Records are dense leaf indexes from 0; stored hashes are keyed by
// tlog.StoredHashIndex; one signed checkpoint per tree size, ever.

// tlogLockKey is the advisory lock key that serialises appends to the
// transparency log of schema, across every process sharing the database.
func tlogLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("lethe-ledger-tlog:" + schema))
	return int64(h.Sum64())
}

// checkStoredHashes checks that hashes is what appending record n must
// store, so that a buggy caller cannot leave a gap in the hash indexes.
func checkStoredHashes(n int64, hashes []tlog.Hash) error {
	if want := tlog.StoredHashCount(n+1) - tlog.StoredHashIndex(0, n); int64(len(hashes)) != want {
		return fmt.Errorf("ledger: transparency log record %d comes with %d stored hashes, want %d", n, len(hashes), want)
	}
	return nil
}

// hashRows is what both drivers' result sets offer (*sql.Rows, pgx.Rows).
type hashRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanHashes reads (idx, hash) rows and returns the hashes in the order of
// indexes.
func scanHashes(rows hashRows, indexes []int64) ([]tlog.Hash, error) {
	found := make(map[int64]tlog.Hash, len(indexes))
	for rows.Next() {
		var (
			idx int64
			b   []byte
			err error
		)
		if err := rows.Scan(&idx, &b); err != nil {
			return nil, unavailable(err)
		}
		if found[idx], err = scanHash(idx, b); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return hashesInOrder(indexes, found)
}

// hashesInOrder returns the hashes of found in the order of indexes.
func hashesInOrder(indexes []int64, found map[int64]tlog.Hash) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		h, ok := found[x]
		if !ok {
			return nil, fmt.Errorf("ledger: the transparency log has no stored hash at index %d", x)
		}
		out[i] = h
	}
	return out, nil
}

// scanHash converts a stored hash column.
func scanHash(idx int64, b []byte) (tlog.Hash, error) {
	var h tlog.Hash
	if len(b) != len(h) {
		return h, fmt.Errorf("ledger: the transparency log's stored hash %d has %d bytes, want %d", idx, len(b), len(h))
	}
	copy(h[:], b)
	return h, nil
}

// nonNilRecord maps nil to an empty slice: drivers bind a nil []byte as
// NULL, and an empty record (or blob) is still a value for a NOT NULL
// column.
func nonNilRecord(record []byte) []byte {
	if record == nil {
		return []byte{}
	}
	return record
}

func errNoTlogRecord(n int64) error {
	return fmt.Errorf("ledger: the transparency log has no record %d", n)
}

func errCheckpointConflict(size int64) error {
	return fmt.Errorf("ledger: a different transparency log checkpoint of size %d is already stored; a log signs one checkpoint per size, ever", size)
}
