package pgstore

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// testHeapPage builds an 8 kB heap page from tuples' attribute bytes: each
// tuple gets a 24-byte header (t_hoff 24) and a LP_NORMAL line pointer, in
// order, numbered from 1; extra line pointers follow as given.
func testHeapPage(t testing.TB, tuples [][]byte, extra ...uint32) []byte {
	t.Helper()
	page := make([]byte, 8192)
	upper := len(page)
	var pointers []uint32
	for _, attrs := range tuples {
		tuple := make([]byte, 24+len(attrs))
		tuple[tHoffAt] = 24
		copy(tuple[24:], attrs)
		upper -= len(tuple)
		copy(page[upper:], tuple)
		pointers = append(pointers, uint32(upper)|lpNormal<<15|uint32(len(tuple))<<17)
	}
	pointers = append(pointers, extra...)
	for i, lp := range pointers {
		binary.LittleEndian.PutUint32(page[pageHeaderLen+4*i:], lp)
	}
	binary.LittleEndian.PutUint16(page[pdLowerAt:], uint16(pageHeaderLen+4*len(pointers)))
	binary.LittleEndian.PutUint16(page[14:], uint16(upper))
	return page
}

// testToastPointer is an on-disk TOAST pointer to value in toastRelation,
// of a raw value of rawSize bytes (its header included) stored in stored.
func testToastPointer(value, toastRelation uint32, rawSize int32, stored uint32) []byte {
	p := make([]byte, toastPointerLen)
	p[0], p[1] = toastPointerByte, vartagOnDisk
	binary.LittleEndian.PutUint32(p[2:], uint32(rawSize))
	binary.LittleEndian.PutUint32(p[6:], stored)
	binary.LittleEndian.PutUint32(p[toastValueIDAt:], value)
	binary.LittleEndian.PutUint32(p[toastRelationIDAt:], toastRelation)
	return p
}

func concat(parts ...[]byte) []byte { return slices.Concat(parts...) }

func TestToastValueIDs_FromHandBuiltPages(t *testing.T) {
	const toast = 16390
	id := []byte{0x09, 0, 0, 0, 0, 0, 0, 0}   // a bigint id
	owner := []byte{0x0b, 'a', 'l', 'i', 'c'} // a short varlena text
	// A value compressed inline: a 4-byte header whose low bits are 10,
	// then pglz bytes, which here hold what looks like a pointer's tail.
	compressed := concat([]byte{0x42, 0x01, 0, 0}, []byte{0x12, 0, 0, 0}, testToastPointer(77, toast, 6148, 6144)[2:])
	// A compressed value stored out of line: extsize < rawsize - 4, and
	// the top 2 bits of va_extinfo name the method (pglz = 0, lz4 = 1).
	compressedOut := testToastPointer(505, toast, 100000, 1<<30|20000)
	page := testHeapPage(t, [][]byte{
		concat(id, owner, testToastPointer(501, toast, 3076, 3072)),                                  // 1: one pointer
		concat(id, testToastPointer(502, toast, 6148, 6144), testToastPointer(503, toast, 400, 396)), // 2: two
		concat(id, owner, testToastPointer(601, toast+1, 3076, 3072)),                                // 3: another TOAST table's
		concat(id, owner, compressed),                                                                // 4: inline, compressed
		concat(id, compressedOut),                                                                    // 5: out of line, compressed
		concat(id, testToastPointer(504, toast, 3076, 4000)),                                         // 6: impossible sizes
		concat(id, testToastPointer(506, toast, 3076, 0)),                                            // 7: nothing stored
	}, 0 /* 8: unused */, 3<<15|100<<17|200 /* 9: dead */)
	for _, c := range []struct {
		name    string
		lines   []uint16
		want    []uint32
		missing int
	}{
		{"one pointer", []uint16{1}, []uint32{501}, 0},
		{"two pointers in one row", []uint16{2}, []uint32{502, 503}, 0},
		{"another TOAST table's pointer is ignored", []uint16{3}, nil, 0},
		{"a compressed inline value is ignored", []uint16{4}, nil, 0},
		{"a compressed out-of-line value is found", []uint16{5}, []uint32{505}, 0},
		{"a stored size over the raw size is no pointer", []uint16{6}, nil, 0},
		{"a stored size of zero is no pointer", []uint16{7}, nil, 0},
		{"only the rows asked for", []uint16{5, 1}, []uint32{505, 501}, 0},
		{"unused and dead line pointers held no row", []uint16{8, 9}, nil, 2},
		{"past the line pointer array, or zero", []uint16{10, 500, 0}, nil, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, missing, err := toastValueIDs(page, c.lines, toast)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) || missing != c.missing {
				t.Fatalf("got %v (missing %d), want %v (missing %d)", got, missing, c.want, c.missing)
			}
		})
	}
}

func TestToastValueIDs_PagesThatAreNotHeapPages(t *testing.T) {
	const toast = 16390
	good := testHeapPage(t, [][]byte{testToastPointer(501, toast, 3076, 3072)})
	for _, c := range []struct {
		name string
		page []byte
	}{
		{"empty", nil},
		{"shorter than a header", good[:20]},
		{"pd_lower past the page", func() []byte {
			p := slices.Clone(good)
			binary.LittleEndian.PutUint16(p[pdLowerAt:], 9000)
			return p
		}()},
		{"pd_lower inside the header", func() []byte {
			p := slices.Clone(good)
			binary.LittleEndian.PutUint16(p[pdLowerAt:], 10)
			return p
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := toastValueIDs(c.page, []uint16{1}, toast); !errors.Is(err, errPageUnreadable) {
				t.Fatalf("got %v, want errPageUnreadable", err)
			}
		})
	}
	t.Run("a truncated page: the tuple past its end held no row", func(t *testing.T) {
		// The line pointer array fits, the tuple it points at does not.
		got, missing, err := toastValueIDs(good[:1024], []uint16{1}, toast)
		if err != nil || got != nil || missing != 1 {
			t.Fatalf("got %v, %d missing, %v", got, missing, err)
		}
	})
	t.Run("a tuple whose t_hoff is past its end", func(t *testing.T) {
		p := slices.Clone(good)
		lp := binary.LittleEndian.Uint32(p[pageHeaderLen:])
		p[int(lp&0x7fff)+tHoffAt] = 255
		got, missing, err := toastValueIDs(p, []uint16{1}, toast)
		if err != nil || got != nil || missing != 1 {
			t.Fatalf("got %v, %d missing, %v", got, missing, err)
		}
	})
}

func FuzzToastValueIDs(f *testing.F) {
	const toast = 16390
	f.Add(testHeapPage(f, [][]byte{testToastPointer(501, toast, 3076, 3072)}), uint16(1))
	f.Add(testHeapPage(f, [][]byte{concat([]byte{1, 2, 3}, testToastPointer(7, toast, 400, 396))}, 0)[:600], uint16(2))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, page []byte, line uint16) {
		ids, missing, err := toastValueIDs(page, []uint16{line, line + 1}, toast)
		if err != nil {
			if ids != nil || missing != 0 {
				t.Fatalf("an unreadable page returned %v, %d", ids, missing)
			}
			return
		}
		if missing < 0 || missing > 2 {
			t.Fatalf("%d of 2 lines missing", missing)
		}
		if len(ids) > 2*len(page)/toastPointerLen {
			t.Fatalf("%d pointers in %d bytes", len(ids), len(page))
		}
	})
}
