package pgstore

import (
	"encoding/binary"
	"math"
)

// vectorValues decodes stored vector elements: float4 (elemSize 4) or
// IEEE half (2), little-endian.
func vectorValues(stored []byte, elemSize int, into []float32) []float32 {
	into = into[:0]
	for i := 0; i+elemSize <= len(stored); i += elemSize {
		if elemSize == 2 {
			into = append(into, halfToFloat(binary.LittleEndian.Uint16(stored[i:])))
		} else {
			into = append(into, math.Float32frombits(binary.LittleEndian.Uint32(stored[i:])))
		}
	}
	return into
}

// sentValues decodes a vector's or halfvec's binary send form (int16 dim,
// int16 unused, then big-endian elements).
func sentValues(sent []byte, elemSize int) []float32 {
	if len(sent) < 4 {
		return nil
	}
	out := make([]float32, 0, (len(sent)-4)/elemSize)
	for i := 4; i+elemSize <= len(sent); i += elemSize {
		if elemSize == 2 {
			out = append(out, halfToFloat(binary.BigEndian.Uint16(sent[i:])))
		} else {
			out = append(out, math.Float32frombits(binary.BigEndian.Uint32(sent[i:])))
		}
	}
	return out
}

// halfToFloat converts an IEEE 754 half-precision value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp, frac := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value frac * 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// floatToHalf converts to IEEE 754 half precision, rounding to nearest
// even, as pgvector's Float4ToHalfUnchecked does; values past the half
// range become infinity.
func floatToHalf(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp, frac := int(bits>>23)&0xff, bits&0x7fffff
	switch {
	case exp == 0xff && frac != 0: // NaN
		return sign | 0x7e00 | uint16(frac>>13)
	case exp == 0xff:
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign // rounds to zero
		}
		frac |= 0x800000 // the implicit bit
		shift := uint32(14 - e)
		half := frac >> shift
		rest, halfway := frac&(1<<shift-1), uint32(1)<<(shift-1)
		if rest > halfway || (rest == halfway && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | frac>>13
	rest := frac & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to infinity: as IEEE does
	}
	return sign | uint16(half)
}
