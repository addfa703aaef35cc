package pgstore

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// TestStoredTypes_SparsevecAndBitAsStored: a sparsevec is looked for as
// stored (every field little-endian, its indices then its values); a bit
// string of at least a fragment's length by its bits; a shorter bit
// string not at all.
func TestStoredTypes_SparsevecAndBitAsStored(t *testing.T) {
	// sparsevec_send of {1:1.5,3:2}/5: dim 5, nnz 2, unused 0, indices 0 and 2, values.
	sent := []byte{0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x3f, 0xc0, 0, 0, 0x40, 0, 0, 0}
	stored := []byte{5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0x40}
	f := newFingerprint("s")
	f.addStored(storedTypes["sparsevec"], sent)
	if v, _ := f.match.find(append([]byte("page:"), stored...)); !v {
		t.Fatal("the stored sparsevec is not found")
	}
	if v, _ := f.match.find(sent); v {
		t.Fatal("the send form (big-endian) is not what a page holds")
	}

	bits := make([]byte, 4+24) // bit(192)
	binary.BigEndian.PutUint32(bits, 192)
	for i := range 24 {
		bits[4+i] = byte(i*37 + 11)
	}
	f = newFingerprint("s")
	f.addStored(storedTypes["bit"], bits)
	if v, _ := f.match.find(append([]byte("xx"), bits[4:]...)); !v {
		t.Fatal("the bits of a bit(192) are not found")
	}
	f = newFingerprint("s")
	f.addStored(storedTypes["bit"], bits[:4+8])
	if v, _ := f.match.find(bits[:4+8]); v {
		t.Fatal("a bit(64) is looked for: too short to tell apart")
	}
}

// TestStoredTypes_VectorCopies: a vector's binary quantization has a bit
// per element, set above zero, the first in the high bit; its halfvec
// copies round each element.
func TestStoredTypes_VectorCopies(t *testing.T) {
	values := []float32{0.5, -1, 0, 2, 3, -0.25, 1e-9, -7, 1}
	sent := make([]byte, 4+4*len(values))
	binary.BigEndian.PutUint16(sent, uint16(len(values)))
	for i, v := range values {
		binary.BigEndian.PutUint32(sent[4+4*i:], math.Float32bits(v))
	}
	if got, want := binaryQuantized(sent), []byte{0, 0, 0, 9, 0b10011010, 0b10000000}; !bytes.Equal(got, want) {
		t.Errorf("binaryQuantized = %08b, want %08b", got, want)
	}
	asHalf, normalised := halfCopies(sent)
	if got := sentValues(asHalf, 2); got[0] != 0.5 || got[1] != -1 || got[6] != 0 || got[7] != -7 {
		t.Errorf("as halfvec: %v", got)
	}
	var norm float64
	for _, v := range sentValues(normalised, 2) {
		norm += float64(v) * float64(v)
	}
	if math.Abs(norm-1) > 1e-3 {
		t.Errorf("the normalised halfvec has a squared norm of %g", norm)
	}
}
