package translog

import (
	"errors"
	"fmt"

	merkle "golang.org/x/mod/sumdb/tlog"
)

// Sentinel errors of the client-side checks, for callers to branch on.
var (
	// ErrTruncated reports a newer checkpoint with fewer records than an
	// older one: the log lost records.
	ErrTruncated = errors.New("tlog: log truncated")
	// ErrForked reports two checkpoints whose trees do not extend one
	// another: same size but different roots, or a consistency proof
	// that fails. The operator showed different histories.
	ErrForked = errors.New("tlog: log forked")
	// ErrOriginMismatch reports checkpoints of two different logs.
	ErrOriginMismatch = errors.New("tlog: checkpoints are of different logs")
	// ErrNotIncluded reports an inclusion proof that does not place the
	// record at its index in the checkpoint's tree.
	ErrNotIncluded = errors.New("tlog: record not in the checkpoint's tree")
)

// VerifyInclusion checks that record is record index of the tree cp
// states, using proof from Log.InclusionProof or a tlog-proof. cp must
// come from ParseCheckpoint, which verified its signature.
func VerifyInclusion(cp Checkpoint, index int64, record []byte, proof RecordProof) error {
	if index < 0 || index >= cp.Size {
		return fmt.Errorf("%w: index %d is outside a tree of size %d", ErrNotIncluded, index, cp.Size)
	}
	// CheckInclusion, not merkle.CheckRecord: the latter never
	// returns for trees of more than 2^62 records.
	if err := CheckInclusion(proof, cp.Size, cp.Root, index, merkle.RecordHash(record)); err != nil {
		return fmt.Errorf("%w: record %d against the checkpoint of size %d: %v", ErrNotIncluded, index, cp.Size, err)
	}
	return nil
}

// VerifyConsistency checks that newer's tree extends older's, using proof
// from Log.ConsistencyProof(older.Size, newer.Size). Both checkpoints must
// come from ParseCheckpoint. A client that keeps the last checkpoint it
// verified and runs this against each new one detects, with no head
// recorded anywhere else, a log that was truncated (ErrTruncated) or that
// shows it a different history (ErrForked).
func VerifyConsistency(older, newer Checkpoint, proof TreeProof) error {
	switch {
	case older.Origin != newer.Origin:
		return fmt.Errorf("%w: %q and %q", ErrOriginMismatch, older.Origin, newer.Origin)
	case newer.Size < older.Size:
		return fmt.Errorf("%w: the newer checkpoint has %d records, the older %d", ErrTruncated, newer.Size, older.Size)
	case newer.Size == older.Size:
		if newer.Root != older.Root {
			return fmt.Errorf("%w: two checkpoints of size %d with different roots (%s, %s)", ErrForked, older.Size, older.Root, newer.Root)
		}
		if len(proof) != 0 {
			return fmt.Errorf("tlog: the consistency proof between trees of the same size must be empty, got %d hashes", len(proof))
		}
		return nil
	case older.Size == 0:
		if older.Root != emptyRoot {
			return fmt.Errorf("%w: the checkpoint of size 0 does not state the empty tree's root", ErrForked)
		}
		if len(proof) != 0 {
			return fmt.Errorf("tlog: the consistency proof from the empty tree must be empty, got %d hashes", len(proof))
		}
		return nil
	}
	if err := CheckConsistency(proof, older.Size, older.Root, newer.Size, newer.Root); err != nil {
		return fmt.Errorf("%w: the tree of size %d does not extend the tree of size %d (%v)", ErrForked, newer.Size, older.Size, err)
	}
	return nil
}
