package translog_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
)

// The client's view: checkpoints it kept, a newer one the operator shows,
// and the operator's proof between them.
func TestVerifyConsistency_DetectsTruncationAndForks(t *testing.T) {
	ctx := context.Background()
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 3)
	at3 := sign(t, l)
	appendRecords(t, l, 3, 7)
	at7 := sign(t, l)
	proof3to7, err := l.ConsistencyProof(ctx, 3, 7)
	require.NoError(t, err)
	fork7 := forkedCheckpoint(t, 7)
	tampered := append(translog.TreeProof(nil), proof3to7...)
	tampered[0][0] ^= 1

	other, err := translog.New(&translog.MemoryStorage{}, otherKey.signer, "other.example/log")
	require.NoError(t, err)
	appendRecords(t, other, 0, 7)
	otherAt7, err := other.Sign(ctx)
	require.NoError(t, err)

	for _, c := range []struct {
		name           string
		older, newer   translog.Checkpoint
		proof          translog.TreeProof
		want           error
		wantAnyFailure bool
	}{
		{name: "Extension", older: at3, newer: at7, proof: proof3to7},
		{name: "SameCheckpoint", older: at7, newer: at7},
		{name: "Truncated", older: at7, newer: at3, proof: proof3to7, want: translog.ErrTruncated},
		{name: "SameSizeDifferentRoot", older: at7, newer: fork7, want: translog.ErrForked},
		// The operator cannot prove that a rewritten tree extends the
		// one the client saw: the honest proof does not fit it.
		{name: "NewTreeDoesNotExtendOld", older: at3, newer: fork7, proof: proof3to7, want: translog.ErrForked},
		{name: "TamperedProof", older: at3, newer: at7, proof: tampered, want: translog.ErrForked},
		{name: "NoProof", older: at3, newer: at7, want: translog.ErrForked},
		{name: "AnotherLog", older: at3, newer: otherAt7, proof: proof3to7, want: translog.ErrOriginMismatch},
		{name: "ProofBetweenEqualSizesMustBeEmpty", older: at7, newer: at7, proof: proof3to7, wantAnyFailure: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := translog.VerifyConsistency(c.older, c.newer, c.proof)
			switch {
			case c.want != nil:
				require.ErrorIs(t, err, c.want)
			case c.wantAnyFailure:
				require.Error(t, err)
			default:
				require.NoError(t, err)
			}
		})
	}
}

func TestVerifyInclusion_RejectsWhatTheTreeDoesNotHold(t *testing.T) {
	ctx := context.Background()
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 9)
	cp := sign(t, l)
	proof, err := l.InclusionProof(ctx, 4, cp.Size)
	require.NoError(t, err)
	require.NoError(t, translog.VerifyInclusion(cp, 4, record(4), proof))
	tampered := append(translog.RecordProof(nil), proof...)
	tampered[1][5] ^= 1
	for _, c := range []struct {
		name   string
		cp     translog.Checkpoint
		index  int64
		record []byte
		proof  translog.RecordProof
	}{
		{"OtherRecord", cp, 4, record(5), proof},
		{"OtherIndex", cp, 5, record(4), proof},
		{"IndexBeyondTree", cp, 9, record(4), proof},
		{"NegativeIndex", cp, -1, record(4), proof},
		{"TamperedProof", cp, 4, record(4), tampered},
		{"TruncatedProof", cp, 4, record(4), proof[:len(proof)-1]},
		{"ForkedCheckpoint", forkedCheckpoint(t, 9), 4, record(4), proof},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorIs(t, translog.VerifyInclusion(c.cp, c.index, c.record, c.proof), translog.ErrNotIncluded)
		})
	}
}

// TestVerify_ReturnsForCheckpointsOfHugeTrees: a checkpoint may state any
// size below 2^63; x/mod's proof checks never return above 2^62. Both
// client checks must answer (here, refuse) instead of hanging.
func TestVerify_ReturnsForCheckpointsOfHugeTrees(t *testing.T) {
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 3)
	at3 := sign(t, l)
	proof, err := l.InclusionProof(context.Background(), 1, 3)
	require.NoError(t, err)
	for _, size := range []int64{1<<62 + 1, math.MaxInt64} {
		huge := at3
		huge.Size = size
		done := make(chan [2]error, 1)
		go func() {
			done <- [2]error{translog.VerifyInclusion(huge, 1, record(1), proof), translog.VerifyConsistency(at3, huge, translog.TreeProof(proof))}
		}()
		select {
		case errs := <-done:
			require.ErrorIs(t, errs[0], translog.ErrNotIncluded, "size %d", size)
			require.ErrorIs(t, errs[1], translog.ErrForked, "size %d", size)
		case <-time.After(time.Minute):
			t.Fatalf("VerifyInclusion or VerifyConsistency against a tree of %d records had not returned after a minute", size)
		}
	}
}
