package translog

import (
	"errors"

	merkle "golang.org/x/mod/sumdb/tlog"
)

// Proofs are checked here, not with golang.org/x/mod/sumdb/tlog's
// CheckRecord and CheckTree: those split a tree at the largest power of
// two below its size with a loop that never ends for sizes above 2^62
// (1<<63 overflows), and a checkpoint signed by a trusted key may state
// any size below 2^63. The algorithms of RFC 9162 (sections 2.1.3.2 and
// 2.1.4.2) walk the proof once, shifting the indexes right, so their work
// is bounded by the proof's length and 64 shifts, whatever the sizes say.
// The proofs are those of RFC 6962, as x/mod's ProveRecord and ProveTree
// write them.

// errProofFailed reports a proof that does not lead to the stated root.
var errProofFailed = errors.New("the proof does not lead to the root")

// CheckInclusion reports whether proof shows that the leaf whose hash is
// leafHash is leaf index of the tree of size leaves whose root is root
// (RFC 9162 section 2.1.3.2). It returns in time bounded by len(proof).
func CheckInclusion(proof merkle.RecordProof, size int64, root merkle.Hash, index int64, leafHash merkle.Hash) error {
	if index < 0 || size <= 0 || index >= size {
		return errors.New("the index is not a leaf of the tree")
	}
	fn, sn := uint64(index), uint64(size-1)
	r := leafHash
	for _, p := range proof {
		if sn == 0 {
			return errProofFailed // more hashes than the path has nodes
		}
		if fn&1 == 1 || fn == sn {
			r = merkle.NodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			r = merkle.NodeHash(r, p)
		}
		fn, sn = fn>>1, sn>>1
	}
	if sn != 0 || r != root {
		return errProofFailed
	}
	return nil
}

// CheckConsistency reports whether proof shows that the tree of newSize
// leaves with root newRoot extends the tree of oldSize leaves with root
// oldRoot, 0 < oldSize < newSize (RFC 9162 section 2.1.4.2). It returns
// in time bounded by len(proof).
func CheckConsistency(proof merkle.TreeProof, oldSize int64, oldRoot merkle.Hash, newSize int64, newRoot merkle.Hash) error {
	if oldSize <= 0 || newSize <= oldSize {
		return errors.New("a consistency proof relates a non-empty tree to a larger one")
	}
	if len(proof) == 0 {
		return errProofFailed
	}
	path := proof
	if oldSize&(oldSize-1) == 0 { // a power of two: the old tree is a node of the new one
		path = append(merkle.TreeProof{oldRoot}, proof...)
	}
	fn, sn := uint64(oldSize-1), uint64(newSize-1)
	for fn&1 == 1 {
		fn, sn = fn>>1, sn>>1
	}
	fr, sr := path[0], path[0]
	for _, c := range path[1:] {
		if sn == 0 {
			return errProofFailed
		}
		if fn&1 == 1 || fn == sn {
			fr, sr = merkle.NodeHash(c, fr), merkle.NodeHash(c, sr)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			sr = merkle.NodeHash(sr, c)
		}
		fn, sn = fn>>1, sn>>1
	}
	if sn != 0 || fr != oldRoot || sr != newRoot {
		return errProofFailed
	}
	return nil
}
