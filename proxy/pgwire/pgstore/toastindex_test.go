package pgstore

import (
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"testing"
)

// testIndexEntry is a TOAST index leaf entry for chunk of value, pointing
// at block (offset 1).
func testIndexEntry(value uint32, chunk int32, block uint32) []byte {
	e := make([]byte, 16)
	binary.LittleEndian.PutUint16(e[0:], uint16(block>>16))
	binary.LittleEndian.PutUint16(e[2:], uint16(block))
	binary.LittleEndian.PutUint16(e[4:], 1)
	binary.LittleEndian.PutUint16(e[6:], 16)
	binary.LittleEndian.PutUint32(e[8:], value)
	binary.LittleEndian.PutUint32(e[12:], uint32(chunk))
	return e
}

// testPostingEntry is a deduplicated entry for value whose TIDs point at
// blocks.
func testPostingEntry(value uint32, blocks ...uint32) []byte {
	e := testIndexEntry(value, 0, 0)
	at := len(e)
	binary.LittleEndian.PutUint16(e[0:], 0)
	binary.LittleEndian.PutUint16(e[2:], uint16(at))
	binary.LittleEndian.PutUint16(e[4:], btIsPosting|uint16(len(blocks)))
	binary.LittleEndian.PutUint16(e[6:], indexAltTID|uint16(at+6*len(blocks)))
	for _, b := range blocks {
		tid := make([]byte, 6)
		binary.LittleEndian.PutUint16(tid[0:], uint16(b>>16))
		binary.LittleEndian.PutUint16(tid[2:], uint16(b))
		binary.LittleEndian.PutUint16(tid[4:], 1)
		e = append(e, tid...)
	}
	return e
}

// testBtreePage lays entries out as a btree page with the given flags and
// right sibling (0 for the rightmost page).
func testBtreePage(flags uint16, next uint32, entries ...[]byte) []byte {
	page := make([]byte, 8192)
	special := len(page) - btOpaqueLen
	binary.LittleEndian.PutUint32(page[special+btNextAt:], next)
	binary.LittleEndian.PutUint16(page[special+btFlagsAt:], flags)
	upper := special
	for i, e := range entries {
		upper -= len(e)
		copy(page[upper:], e)
		binary.LittleEndian.PutUint32(page[pageHeaderLen+4*i:], uint32(upper)|lpNormal<<15|uint32(len(e))<<17)
	}
	binary.LittleEndian.PutUint16(page[pdLowerAt:], uint16(pageHeaderLen+4*len(entries)))
	binary.LittleEndian.PutUint16(page[pdSpecialAt:], uint16(special))
	return page
}

func sorted(b []int64) []int64 {
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return b
}

func TestToastIndexBlocks_FromHandBuiltPages(t *testing.T) {
	want := map[uint32]bool{501: true, 502: true}
	entries := [][]byte{
		testIndexEntry(500, 0, 7),
		testIndexEntry(501, 0, 8), testIndexEntry(501, 1, 70000), // a block over 65,535
		testPostingEntry(502, 9, 10),
		testIndexEntry(503, 0, 11),
	}
	for _, c := range []struct {
		name string
		page []byte
		want []int64
	}{
		{"the rightmost leaf: every entry", testBtreePage(btpLeaf, 0, entries...), []int64{8, 9, 10, 70000}},
		{"a leaf with a right sibling: its high key is no entry",
			testBtreePage(btpLeaf, 5, append([][]byte{testIndexEntry(501, 0, 99)}, entries...)...), []int64{8, 9, 10, 70000}},
		{"an inner page holds no chunk", testBtreePage(0, 0, entries...), nil},
		{"a deleted leaf holds none", testBtreePage(btpLeaf|btpDeleted, 0, entries...), nil},
		{"a half-dead leaf holds none", testBtreePage(btpLeaf|btpHalfDead, 0, entries...), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := toastIndexBlocks(c.page, want)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sorted(got), c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestToastIndexBlocks_PagesThatAreNotBtreePages(t *testing.T) {
	good := testBtreePage(btpLeaf, 0, testIndexEntry(501, 0, 8))
	for _, c := range []struct {
		name string
		page []byte
	}{
		{"empty", nil},
		{"truncated before its special space", good[:4096]},
		{"pd_lower past pd_special", func() []byte {
			p := slices.Clone(good)
			binary.LittleEndian.PutUint16(p[pdLowerAt:], 8190)
			return p
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := toastIndexBlocks(c.page, map[uint32]bool{501: true}); !errors.Is(err, errPageUnreadable) {
				t.Fatalf("got %v, want errPageUnreadable", err)
			}
		})
	}
	t.Run("a posting list longer than its entry is read as far as it goes", func(t *testing.T) {
		e := testPostingEntry(501, 9, 10)
		binary.LittleEndian.PutUint16(e[4:], btIsPosting|100)
		got, err := toastIndexBlocks(testBtreePage(btpLeaf, 0, e), map[uint32]bool{501: true})
		if err != nil || !slices.Equal(sorted(got), []int64{9, 10}) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func FuzzToastIndexBlocks(f *testing.F) {
	f.Add(testBtreePage(btpLeaf, 0, testIndexEntry(501, 0, 8), testPostingEntry(501, 9, 10)))
	f.Add(testBtreePage(btpLeaf, 3, testIndexEntry(501, 0, 8))[:300])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		got, err := toastIndexBlocks(page, map[uint32]bool{501: true})
		if err != nil && got != nil {
			t.Fatalf("an unreadable page returned %v", got)
		}
		if len(got) > len(page)/itemPointerLen {
			t.Fatalf("%d blocks from %d bytes", len(got), len(page))
		}
	})
}
