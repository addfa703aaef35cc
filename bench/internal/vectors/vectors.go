// Package vectors makes the pgvector values the bench programs send: a
// small pool of random vectors in pgvector's binary and text forms, so that
// building a statement costs a copy, not float formatting.
package vectors

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Pool holds n random vectors of dim dimensions, each in both forms; the
// two forms of a vector hold the same values.
type Pool struct {
	// Binary are pgvector's binary form: uint16 dim, uint16 0, dim ×
	// big-endian float32.
	Binary [][]byte
	// Text are pgvector's text form: [f,f,...].
	Text []string
}

// NewPool makes n vectors of dim dimensions from seed.
func NewPool(dim, n int, seed uint64) *Pool {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := &Pool{}
	for range n {
		b := make([]byte, 4+4*dim)
		binary.BigEndian.PutUint16(b[0:], uint16(dim))
		binary.BigEndian.PutUint16(b[2:], 0)
		var sb strings.Builder
		sb.Grow(dim * 11)
		sb.WriteByte('[')
		for i := range dim {
			// Rounded to 6 decimals so that text and binary hold the same value.
			f := float32(math.Round((r.Float64()*2-1)*1e6) / 1e6)
			binary.BigEndian.PutUint32(b[4+4*i:], math.Float32bits(f))
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		sb.WriteByte(']')
		p.Binary = append(p.Binary, b)
		p.Text = append(p.Text, sb.String())
	}
	return p
}
