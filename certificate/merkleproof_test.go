package certificate

import (
	"github.com/lethe-privacy/lethe/translog"

	"fmt"
	"math"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// treeOf is a test log of n leaves "leaf 0" … "leaf n-1".
func treeOf(t *testing.T, n int) *testLog {
	t.Helper()
	var l testLog
	for i := 0; i < n; i++ {
		l.append(t, []byte(fmt.Sprintf("leaf %d", i)))
	}
	return &l
}

// TestCheckInclusion_AcceptsExactlyTheProofsOfRFC6962 checks every leaf
// of every tree up to 40 leaves: the proof x/mod writes verifies, and the
// same proof with any hash flipped, one hash short or one too many, at
// another index or against another size, does not.
func TestCheckInclusion_AcceptsExactlyTheProofsOfRFC6962(t *testing.T) {
	l := treeOf(t, 40)
	for size := int64(1); size <= 40; size++ {
		root, err := tlog.TreeHash(size, l)
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < size; i++ {
			p, err := tlog.ProveRecord(size, i, l)
			if err != nil {
				t.Fatal(err)
			}
			leaf := tlog.RecordHash(l.leaves[i])
			if err := translog.CheckInclusion(p, size, root, i, leaf); err != nil {
				t.Fatalf("size %d index %d: %v", size, i, err)
			}
			for j := range p {
				bad := append(tlog.RecordProof{}, p...)
				bad[j][0] ^= 1
				if translog.CheckInclusion(bad, size, root, i, leaf) == nil {
					t.Fatalf("size %d index %d: hash %d flipped verifies", size, i, j)
				}
			}
			if len(p) > 0 && translog.CheckInclusion(p[1:], size, root, i, leaf) == nil {
				t.Fatalf("size %d index %d: a hash short verifies", size, i)
			}
			if translog.CheckInclusion(append(append(tlog.RecordProof{}, p...), root), size, root, i, leaf) == nil {
				t.Fatalf("size %d index %d: a hash too many verifies", size, i)
			}
			if size > 1 && translog.CheckInclusion(p, size, root, (i+1)%size, leaf) == nil {
				t.Fatalf("size %d index %d: verifies at index %d", size, i, (i+1)%size)
			}
		}
	}
}

// TestCheckConsistency_AcceptsExactlyTheProofsOfRFC6962 checks every pair
// of trees up to 40 leaves against x/mod's proofs and their corruptions.
func TestCheckConsistency_AcceptsExactlyTheProofsOfRFC6962(t *testing.T) {
	l := treeOf(t, 40)
	roots := make([]tlog.Hash, 41)
	for n := int64(1); n <= 40; n++ {
		var err error
		if roots[n], err = tlog.TreeHash(n, l); err != nil {
			t.Fatal(err)
		}
	}
	for newSize := int64(2); newSize <= 40; newSize++ {
		for oldSize := int64(1); oldSize < newSize; oldSize++ {
			p, err := tlog.ProveTree(newSize, oldSize, l)
			if err != nil {
				t.Fatal(err)
			}
			if err := translog.CheckConsistency(p, oldSize, roots[oldSize], newSize, roots[newSize]); err != nil {
				t.Fatalf("%d -> %d: %v", oldSize, newSize, err)
			}
			for j := range p {
				bad := append(tlog.TreeProof{}, p...)
				bad[j][0] ^= 1
				if translog.CheckConsistency(bad, oldSize, roots[oldSize], newSize, roots[newSize]) == nil {
					t.Fatalf("%d -> %d: hash %d flipped verifies", oldSize, newSize, j)
				}
			}
			if translog.CheckConsistency(p[1:], oldSize, roots[oldSize], newSize, roots[newSize]) == nil {
				t.Fatalf("%d -> %d: a hash short verifies", oldSize, newSize)
			}
			if translog.CheckConsistency(append(append(tlog.TreeProof{}, p...), roots[1]), oldSize, roots[oldSize], newSize, roots[newSize]) == nil {
				t.Fatalf("%d -> %d: a hash too many verifies", oldSize, newSize)
			}
			if translog.CheckConsistency(p, oldSize, roots[oldSize], newSize, roots[oldSize]) == nil {
				t.Fatalf("%d -> %d: verifies against the old root as the new one", oldSize, newSize)
			}
		}
	}
}

// hugeSizes are tree sizes above 2^62, where x/mod's proof checks loop
// for ever.
var hugeSizes = []int64{1<<62 + 1, 1<<62 + 12345, math.MaxInt64 - 1, math.MaxInt64}

// returnsWithin fails the test if f has not returned after a minute: a
// check that loops for ever fails instead of hanging the test run. It
// asserts nothing about speed.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s had not returned after a minute", what)
	}
}

// TestCheckInclusion_ReturnsForHugeTrees: proofs in trees of more than
// 2^62 leaves are checked, the right one accepted and a wrong one
// refused, instead of never returning.
func TestCheckInclusion_ReturnsForHugeTrees(t *testing.T) {
	leaf := tlog.RecordHash([]byte("leaf"))
	for _, size := range hugeSizes {
		for _, index := range []int64{0, 2, 1 << 62, size - 1} {
			proof, root := hugeTreePath(size, index, leaf)
			returnsWithin(t, fmt.Sprintf("translog.CheckInclusion(size %d, index %d)", size, index), func() {
				if err := translog.CheckInclusion(proof, size, root, index, leaf); err != nil {
					t.Errorf("size %d index %d: %v", size, index, err)
				}
				if translog.CheckInclusion(proof, size, tlog.Hash{}, index, leaf) == nil {
					t.Errorf("size %d index %d: verifies against another root", size, index)
				}
			})
		}
		returnsWithin(t, fmt.Sprintf("translog.CheckConsistency(1 -> %d)", size), func() {
			if translog.CheckConsistency(tlog.TreeProof{leaf}, 1, leaf, size, leaf) == nil {
				t.Errorf("a one-hash proof to a tree of %d leaves verifies", size)
			}
		})
	}
}

// hugeTreePath makes up an inclusion path for leaf index of a tree of
// size leaves (hashes of their depth) and returns it with the root it
// leads to: a tree that large cannot be built, but its proofs can.
func hugeTreePath(size, index int64, leafHash tlog.Hash) (tlog.RecordProof, tlog.Hash) {
	var proof tlog.RecordProof
	fn, sn := uint64(index), uint64(size-1)
	r := leafHash
	for sn != 0 {
		p := tlog.RecordHash([]byte(fmt.Sprintf("sibling %d", len(proof))))
		if fn&1 == 1 || fn == sn {
			r = tlog.NodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			r = tlog.NodeHash(r, p)
		}
		proof = append(proof, p)
		fn, sn = fn>>1, sn>>1
	}
	return proof, r
}
