package pgstore

import (
	"encoding/binary"
	"math"
)

// storedType is how the page scan recognises the values of a column type
// of pgvector on pages: what the server's binary send function writes,
// turned into the bytes a little-endian server (x86-64, arm64) stores
// after the varlena header.
type storedType struct {
	send      string // the type's binary send function
	normalise bool   // l2_normalize takes it: a cosine index keeps that copy
	// elemSize is the size of a dense vector's elements (4 vector, 2
	// halfvec), which an index search compares; 0 for the other types.
	elemSize int
	// disk turns a value as sent into its stored bytes, and says where its
	// data starts (after its own header); false for bytes it cannot read.
	disk func(sent []byte) (stored []byte, dataAt int, ok bool)
	// shortWhole: a value whose data is shorter than a fragment is looked
	// for whole, header included; otherwise it is not looked for (a short
	// bit string is too common to tell apart).
	shortWhole bool
	// copies are values derived from one of this type that an index on an
	// expression of the column keeps, each as its type sends it.
	copies func(sent []byte) []derivedValue
}

// derivedValue is a value of type typ (a key of storedTypes), as sent.
type derivedValue struct {
	typ  string
	sent []byte
}

// storedTypes are the types whose values the scan looks for (vector.h,
// halfvec.h, sparsevec.h, PostgreSQL's varbit.h):
//   - vector, halfvec: int16 dim, int16 unused, then dim float4 or half
//     elements; the send form has the same fields, big-endian;
//   - sparsevec: int32 dim, int32 nnz, int32 unused, nnz int32 indices
//     (0-based), nnz float4 values; the send form has the same fields,
//     big-endian;
//   - bit, varbit: int32 bit length, then the bits, first bit in the high
//     bit of the first byte; the send form has the length big-endian.
var storedTypes = map[string]storedType{
	"vector":    {send: "vector_send", normalise: true, elemSize: 4, disk: denseDisk(4), shortWhole: true, copies: vectorCopies},
	"halfvec":   {send: "halfvec_send", normalise: true, elemSize: 2, disk: denseDisk(2), shortWhole: true},
	"sparsevec": {send: "sparsevec_send", normalise: true, disk: sparseDisk, shortWhole: true},
	"bit":       {send: "bit_send", disk: bitDisk},
	"varbit":    {send: "varbit_send", disk: bitDisk},
}

const (
	// fragmentLen is the length of each fragment of a value looked for,
	// and fragmentStride the distance between their starts: a TOAST chunk
	// (~2 kB) or an index tuple holding any part of a value longer than a
	// stride holds at least one whole fragment.
	fragmentLen    = 16
	fragmentStride = 512
)

// addStored adds fragments of the value of type typ whose send form is
// sent.
func (f *fingerprint) addStored(typ storedType, sent []byte) {
	stored, dataAt, ok := typ.disk(sent)
	if !ok {
		return
	}
	data := stored[dataAt:]
	if len(data) < fragmentLen {
		if typ.shortWhole {
			f.match.add(stored, true) // its header makes the few bytes more distinctive
		}
		return
	}
	for off := 0; off+fragmentLen <= len(data); off += fragmentStride {
		f.match.add(data[off:off+fragmentLen], true)
	}
	if tail := len(data) - fragmentLen; tail%fragmentStride != 0 {
		f.match.add(data[tail:], true)
	}
}

// denseDisk reads vector (elem 4) and halfvec (elem 2) values.
func denseDisk(elem int) func(sent []byte) ([]byte, int, bool) {
	return func(sent []byte) ([]byte, int, bool) {
		if len(sent) < 4 || (len(sent)-4)%elem != 0 {
			return nil, 0, false
		}
		disk := make([]byte, len(sent))
		binary.LittleEndian.PutUint16(disk[0:], binary.BigEndian.Uint16(sent[0:]))
		binary.LittleEndian.PutUint16(disk[2:], binary.BigEndian.Uint16(sent[2:]))
		for i := 4; i+elem <= len(sent); i += elem {
			for j := 0; j < elem; j++ {
				disk[i+j] = sent[i+elem-1-j]
			}
		}
		return disk, 4, true
	}
}

// sparseDisk reads sparsevec values: every field is 4 bytes.
func sparseDisk(sent []byte) ([]byte, int, bool) {
	if len(sent) < 12 || len(sent)%4 != 0 {
		return nil, 0, false
	}
	disk := make([]byte, len(sent))
	for i := 0; i < len(sent); i += 4 {
		binary.LittleEndian.PutUint32(disk[i:], binary.BigEndian.Uint32(sent[i:]))
	}
	return disk, 12, true
}

// bitDisk reads bit and varbit values.
func bitDisk(sent []byte) ([]byte, int, bool) {
	if len(sent) < 4 {
		return nil, 0, false
	}
	disk := append([]byte(nil), sent...)
	binary.LittleEndian.PutUint32(disk, binary.BigEndian.Uint32(sent))
	return disk, 4, true
}

// vectorCopies are the values pgvector derives from a vector that
// indexes on expressions commonly keep: its cast to halfvec, that copy
// L2-normalised (a cosine index on the cast), and binary_quantize of it
// (an index on the quantized bits).
func vectorCopies(sent []byte) []derivedValue {
	asHalf, normalised := halfCopies(sent)
	return []derivedValue{{"halfvec", asHalf}, {"halfvec", normalised}, {"bit", binaryQuantized(sent)}}
}

// binaryQuantized returns, as bit_send writes it, pgvector's
// binary_quantize of the vector whose send form is sent: one bit per
// element, set when the element is above zero, the first element in the
// high bit of the first byte.
func binaryQuantized(sent []byte) []byte {
	values := sentValues(sent, 4)
	out := make([]byte, 4+(len(values)+7)/8)
	binary.BigEndian.PutUint32(out, uint32(len(values)))
	for i, v := range values {
		if v > 0 {
			out[4+i/8] |= 1 << (7 - i%8)
		}
	}
	return out
}

// halfCopies returns, in the binary send form of halfvec, the vector
// whose send form is sent cast to halfvec, and that copy L2-normalised,
// as pgvector computes them (each element rounded to nearest even; the
// norm in float64 over the half values, each quotient rounded to float4,
// then to half): what an expression index on the column cast to halfvec
// stores, normalised for a cosine operator class.
func halfCopies(sent []byte) (asHalf, normalised []byte) {
	values := sentValues(sent, 4)
	asHalf, normalised = make([]byte, 4+2*len(values)), make([]byte, 4+2*len(values))
	copy(asHalf, sent[:4])
	copy(normalised, sent[:4])
	var norm float64
	for i, v := range values {
		h := floatToHalf(v)
		binary.BigEndian.PutUint16(asHalf[4+2*i:], h)
		x := float64(halfToFloat(h))
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range values {
		x := float64(halfToFloat(binary.BigEndian.Uint16(asHalf[4+2*i:])))
		if norm > 0 {
			x /= norm
		}
		binary.BigEndian.PutUint16(normalised[4+2*i:], floatToHalf(float32(x)))
	}
	return asHalf, normalised
}
