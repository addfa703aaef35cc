package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// testIVFFlatPage is testHNSWPage with IVFFlat's page id and next page.
func testIVFFlatPage(next uint32, tuples ...[]byte) []byte {
	page := testHNSWPage(tuples...)
	special := len(page) - specialSpaceSize
	binary.LittleEndian.PutUint32(page[special:], next)
	binary.LittleEndian.PutUint16(page[special+6:], ivfflatPageID)
	return page
}

// testVarlena is a stored float4 vector.
func testVarlena(values ...float32) []byte {
	b := make([]byte, 8+4*len(values))
	binary.LittleEndian.PutUint32(b, uint32(len(b))<<2)
	binary.LittleEndian.PutUint16(b[4:], uint16(len(values)))
	for i, v := range values {
		binary.LittleEndian.PutUint32(b[8+4*i:], math.Float32bits(v))
	}
	return b
}

func testListTuple(start uint32, center ...float32) []byte {
	tuple := make([]byte, ivfflatListLen)
	binary.LittleEndian.PutUint32(tuple, start)
	binary.LittleEndian.PutUint32(tuple[4:], start)
	return append(tuple, testVarlena(center...)...)
}

func testEntry(heap itemPointer, value ...float32) []byte {
	tuple := make([]byte, indexTupleLen)
	testItemPointer(tuple, heap)
	return append(tuple, testVarlena(value...)...)
}

// TestIVFFlatSearch_ReadsTheNearestLists: two lists (centers 0 and 10),
// the second's entries on a chain of two pages; a row is found in the
// list nearest its value, on the chain's second page; a row whose value is
// nearer the other list's center is found there on the next probe; a row
// of no entry is not found.
func TestIVFFlatSearch_ReadsTheNearestLists(t *testing.T) {
	meta := make([]byte, 8192)
	binary.LittleEndian.PutUint32(meta[pageHeaderLen:], ivfflatMagic)
	binary.LittleEndian.PutUint16(meta[pageHeaderLen+10:], 2)
	index := map[int64][]byte{
		0: meta,
		1: testIVFFlatPage(invalidBlock, testListTuple(2, 0), testListTuple(3, 10)),
		2: testIVFFlatPage(invalidBlock, testEntry(itemPointer{7, 1}, 1)),
		3: testIVFFlatPage(5, testEntry(itemPointer{7, 2}, 9)),
		5: testIVFFlatPage(invalidBlock, testEntry(itemPointer{7, 3}, 11), testEntry(itemPointer{7, 4}, 0.5)),
	}
	pages := testPages(index, 100)
	pages.size = 6
	m, err := parseIVFFlatMeta(index[0])
	if err != nil || m.lists != 2 {
		t.Fatalf("meta = %+v, %v", m, err)
	}
	distance, _ := distanceOf("vector_l2_ops")
	search := &ivfflatSearch{pages: pages, distance: distance}
	if err := search.readLists(context.Background(), m.lists); err != nil || len(search.lists) != 2 {
		t.Fatalf("lists = %+v, %v", search.lists, err)
	}
	found, err := search.locate(context.Background(), []rowQuery{
		{at: itemPointer{7, 3}, value: []float32{11}},
		{at: itemPointer{7, 4}, value: []float32{0.5}}, // nearest list 0, entry in list 1
		{at: itemPointer{7, 9}, value: []float32{5}},
	})
	want := map[itemPointer]uint32{{7, 3}: 5, {7, 4}: 5}
	if err != nil || len(found) != len(want) || found[itemPointer{7, 3}] != 5 || found[itemPointer{7, 4}] != 5 {
		t.Fatalf("locate = %v, %v; want %v", found, err, want)
	}
	pages.budget = pages.reads
	pages.cached = map[uint32][]byte{}
	if _, err := search.locate(context.Background(), []rowQuery{{at: itemPointer{7, 1}, value: []float32{1}}}); !errors.Is(err, errPageBudget) {
		t.Errorf("over the budget: %v, want errPageBudget", err)
	}
}

// FuzzIVFFlatPages: the IVFFlat readers take any bytes without panicking.
func FuzzIVFFlatPages(f *testing.F) {
	f.Add(testIVFFlatPage(3, testListTuple(2, 1, 2), testEntry(itemPointer{1, 1}, 3)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		for _, l := range ivfflatLists(page, 4) {
			if len(l.center)%4 != 0 {
				t.Fatalf("a center of %d bytes", len(l.center))
			}
		}
		ivfflatHolds(page, itemPointer{1, 1})
		ivfflatNext(page)
		parseIVFFlatMeta(page)
	})
}
