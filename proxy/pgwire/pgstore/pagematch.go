package pgstore

import (
	"bytes"
	"encoding/binary"
)

// pageMatcher finds, in a raw 8 kB page, any of a set of byte strings of
// two kinds: fragments of the deleted records' vectors and the subject's
// text. It holds those bytes in memory only; nothing it knows is ever
// logged or returned, only whether a page holds them.
//
// Strings of 4 bytes or more are found by their first 4 bytes in a hash
// (one lookup per page offset, behind a bitmap of first 2 bytes, so a page
// costs one pass whatever the number of strings); shorter ones by
// bytes.Index.
type pageMatcher struct {
	first2 [1 << 16 / 64]uint64 // bitmap of the first 2 bytes of every long string
	long   map[uint32][]pattern
	short  []pattern
}

type pattern struct {
	bytes  []byte
	vector bool // a vector fragment; else subject text
}

func newPageMatcher() *pageMatcher { return &pageMatcher{long: map[uint32][]pattern{}} }

// add adds b (copied); empty strings are ignored.
func (m *pageMatcher) add(b []byte, vector bool) {
	if len(b) == 0 {
		return
	}
	p := pattern{bytes: bytes.Clone(b), vector: vector}
	if len(b) < 4 {
		m.short = append(m.short, p)
		return
	}
	k2 := binary.LittleEndian.Uint16(b)
	m.first2[k2/64] |= 1 << (k2 % 64)
	k4 := binary.LittleEndian.Uint32(b)
	m.long[k4] = append(m.long[k4], p)
}

// find reports whether page holds any vector fragment and any subject
// string.
func (m *pageMatcher) find(page []byte) (vector, subject bool) {
	for _, p := range m.short {
		if (p.vector && vector) || (!p.vector && subject) {
			continue
		}
		if bytes.Contains(page, p.bytes) {
			vector, subject = vector || p.vector, subject || !p.vector
		}
	}
	if len(m.long) == 0 {
		return vector, subject
	}
	for i := 0; i+4 <= len(page); i++ {
		k2 := binary.LittleEndian.Uint16(page[i:])
		if m.first2[k2/64]&(1<<(k2%64)) == 0 {
			continue
		}
		for _, p := range m.long[binary.LittleEndian.Uint32(page[i:])] {
			if (p.vector && vector) || (!p.vector && subject) {
				continue
			}
			if bytes.HasPrefix(page[i:], p.bytes) {
				vector, subject = vector || p.vector, subject || !p.vector
			}
		}
		if vector && subject {
			break
		}
	}
	return vector, subject
}
