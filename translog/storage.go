package translog

import "context"

// Storage keeps a log's records, stored hashes and checkpoints. Records are
// dense: record n exists for every n below Size. Implementations must be
// safe for concurrent use, including, for a shared database, by several
// processes at once.
type Storage interface {
	// Append adds record as the next record, n, in one exclusive
	// transaction: it reads the current size n, calls hashes(n, r) with r
	// reading the stored hashes as of that transaction, and writes the
	// record at n and the returned hashes at stored hash indexes
	// StoredHashIndex(0, n), StoredHashIndex(0, n)+1, .... Concurrent
	// appenders never interleave. An error from hashes aborts the append.
	Append(ctx context.Context, record []byte, hashes func(n int64, r HashReader) ([]Hash, error)) (n int64, err error)

	// ReadHashes returns the stored hashes at indexes, in that order, or an
	// error if any is missing.
	ReadHashes(ctx context.Context, indexes []int64) ([]Hash, error)

	// ReadRecord returns record n, or an error if there is none.
	ReadRecord(ctx context.Context, n int64) ([]byte, error)

	// Size returns the number of records.
	Size(ctx context.Context) (int64, error)

	// PutCheckpoint stores the signed checkpoint note for tree size size.
	// There is one per size, ever: storing the same bytes again succeeds,
	// storing different ones for a size already stored fails.
	PutCheckpoint(ctx context.Context, size int64, note []byte) error

	// Checkpoint returns the checkpoint stored for size, or nil if none.
	Checkpoint(ctx context.Context, size int64) ([]byte, error)

	// LatestCheckpoint returns the checkpoint of the largest size stored,
	// or a nil note if none is.
	LatestCheckpoint(ctx context.Context) (size int64, note []byte, err error)
}
