package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// TestFloatToHalf_RoundsToNearestEven: exact values, ties to even, the
// subnormal range, overflow, and a round trip of every half.
func TestFloatToHalf_RoundsToNearestEven(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{1 + 1.0/2048, 0x3c00},             // a tie: to the even 1.0
		{1 + 3.0/2048, 0x3c02},             // a tie: to the even 1+2/1024
		{1 + 1.0/2048 + 1.0/65536, 0x3c01}, // past the tie
		{5.960464477539063e-08, 0x0001},    // the smallest subnormal
		{2.98e-08, 0x0000},                 // under half of it
		{6.097555160522461e-05, 0x03ff},    // the largest subnormal
	}
	for _, c := range cases {
		if got := floatToHalf(c.in); got != c.want {
			t.Errorf("floatToHalf(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads
		}
		if got := floatToHalf(halfToFloat(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip of %#04x: %#04x", h, got)
		}
	}
}

// testHNSWPage lays tuples out on an HNSW page: line pointers from 1, the
// tuples from the end of the page down, the special space last.
func testHNSWPage(tuples ...[]byte) []byte {
	page := make([]byte, 8192)
	special := len(page) - 8
	binary.LittleEndian.PutUint16(page[pdSpecialAt:], uint16(special))
	binary.LittleEndian.PutUint16(page[special+6:], hnswPageID)
	binary.LittleEndian.PutUint16(page[pdLowerAt:], uint16(pageHeaderLen+linePointerLen*len(tuples)))
	end := special
	for i, tuple := range tuples {
		end -= len(tuple)
		copy(page[end:], tuple)
		binary.LittleEndian.PutUint32(page[pageHeaderLen+linePointerLen*i:], uint32(end)|lpNormal<<15|uint32(len(tuple))<<17)
	}
	return page
}

func testItemPointer(b []byte, at itemPointer) {
	binary.LittleEndian.PutUint16(b, uint16(at.block>>16))
	binary.LittleEndian.PutUint16(b[2:], uint16(at.block))
	binary.LittleEndian.PutUint16(b[4:], at.line)
}

// testElement is an element tuple of level 0 pointing at heap, whose
// neighbor tuple is at neighbors, holding a float4 vector.
func testElement(heap, neighbors itemPointer, values ...float32) []byte {
	tuple := make([]byte, hnswElementHeader+8+4*len(values))
	tuple[0] = hnswElementType
	testItemPointer(tuple[4:], heap)
	testItemPointer(tuple[4+itemPointerLen*hnswHeapTIDs:], neighbors)
	binary.LittleEndian.PutUint32(tuple[hnswElementHeader:], uint32(8+4*len(values))<<2)
	binary.LittleEndian.PutUint16(tuple[hnswElementHeader+4:], uint16(len(values)))
	for i, v := range values {
		binary.LittleEndian.PutUint32(tuple[hnswElementHeader+8+4*i:], math.Float32bits(v))
	}
	return tuple
}

// testNeighborTuple is the neighbor tuple of an element of level 0 in an
// index of m 1: two slots.
func testNeighborTuple(first, second itemPointer) []byte {
	tuple := make([]byte, hnswNeighborHeader+2*itemPointerLen)
	tuple[0] = hnswNeighborType
	binary.LittleEndian.PutUint16(tuple[2:], 2)
	testItemPointer(tuple[hnswNeighborHeader:], first)
	testItemPointer(tuple[hnswNeighborHeader+itemPointerLen:], second)
	return tuple
}

func testHNSWMeta(m int, entry itemPointer) []byte {
	page := make([]byte, 8192)
	b := page[pageHeaderLen:]
	binary.LittleEndian.PutUint32(b, hnswMagic)
	binary.LittleEndian.PutUint16(b[12:], uint16(m))
	binary.LittleEndian.PutUint32(b[16:], entry.block)
	binary.LittleEndian.PutUint16(b[20:], entry.line)
	return page
}

// testChain is an index of four elements on layer 0 in a chain, one per
// page (blocks 1 to 4), each element's neighbor tuple beside it, element
// k pointing at heap tuple (100, k) and holding the value (k).
func testChain() map[int64][]byte {
	pages := map[int64][]byte{0: testHNSWMeta(1, itemPointer{1, 1})}
	none := itemPointer{}
	for k := uint32(1); k <= 4; k++ {
		prev, next := itemPointer{k - 1, 1}, itemPointer{k + 1, 1}
		if k == 1 {
			prev = none
		}
		if k == 4 {
			next = none
		}
		pages[int64(k)] = testHNSWPage(testElement(itemPointer{100, uint16(k)}, itemPointer{k, 2}, float32(k)), testNeighborTuple(prev, next))
	}
	return pages
}

// testPages serves the pages of index, reading at most budget.
func testPages(index map[int64][]byte, budget int64) *indexPages {
	return &indexPages{cached: map[uint32][]byte{}, budget: budget, size: 1 << 20,
		read: func(_ context.Context, blocks []int64) (map[int64][]byte, error) {
			out := map[int64][]byte{}
			for _, b := range blocks {
				if page, ok := index[b]; ok {
					out[b] = page
				}
			}
			return out, nil
		}}
}

func testWalk(t *testing.T, index map[int64][]byte, budget int64) *hnswWalk {
	pages := testPages(index, budget)
	if err := pages.load(context.Background(), []uint32{0}); err != nil {
		t.Fatal(err)
	}
	meta, err := parseHNSWMeta(pages.cached[0])
	if err != nil {
		t.Fatal(err)
	}
	distance, _ := distanceOf("vector_l2_ops")
	return &hnswWalk{pages: pages, meta: meta, distance: distance}
}

// TestHNSWWalk_FollowsTheGraphToTheElement: from the entry point, the walk
// follows neighbors towards the value and stops at the element pointing at
// the heap tuple, reading no page past it; a heap tuple no element points
// at is not found; a budget too small for the path stops the walk.
func TestHNSWWalk_FollowsTheGraphToTheElement(t *testing.T) {
	walk := testWalk(t, testChain(), 100)
	block, found, err := walk.findWidening(context.Background(), []float32{3}, itemPointer{100, 3})
	if err != nil || !found || block != 3 {
		t.Fatalf("find = %d, %v, %v; want block 3", block, found, err)
	}
	if walk.pages.reads > 4 {
		t.Errorf("read %d pages, want at most the metapage and blocks 1 to 3", walk.pages.reads)
	}
	if _, found, err := walk.findWidening(context.Background(), []float32{3}, itemPointer{100, 9}); err != nil || found {
		t.Errorf("a heap tuple of no element: found %v, %v", found, err)
	}
	short := testWalk(t, testChain(), 2)
	if _, _, err := short.findWidening(context.Background(), []float32{4}, itemPointer{100, 4}); !errors.Is(err, errPageBudget) {
		t.Errorf("over the budget: %v, want errPageBudget", err)
	}
}

// FuzzHNSWWalk: a walk over an index whose every block is the same
// arbitrary page ends, without panicking, within its budget.
func FuzzHNSWWalk(f *testing.F) {
	chain := testChain()
	f.Add(chain[1])
	f.Add(testHNSWPage(testElement(itemPointer{100, 1}, itemPointer{1, 1}, 1), testNeighborTuple(itemPointer{1, 1}, itemPointer{1, 2})))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		index := map[int64][]byte{0: testHNSWMeta(1, itemPointer{1, 1})}
		for b := int64(1); b < 64; b++ {
			index[b] = page
		}
		walk := testWalk(t, index, 256)
		_, _, err := walk.findWidening(context.Background(), []float32{1}, itemPointer{7, 7})
		if err != nil && !errors.Is(err, errPageBudget) {
			t.Fatal(err)
		}
		if walk.pages.reads > 256 {
			t.Fatalf("read %d pages over a budget of 256", walk.pages.reads)
		}
		e, ok := parseHNSWElement(pageTuple(page, 1), 2)
		if ok && len(e.value)%2 != 0 {
			t.Fatalf("a halfvec value of %d bytes", len(e.value))
		}
		_ = hnswNeighbors(pageTuple(page, 1), 3, 2, 16)
		_, _ = parseHNSWMeta(page)
	})
}

// TestHNSWLocate_FindsAnUnreachableElementNearby: an element no other
// links to (block 4 of five in a chain that skips it) is not reached by
// any walk, and is found on the pages around the elements of the rows
// beside it in the heap; alone, without such rows, it stays missed.
func TestHNSWLocate_FindsAnUnreachableElementNearby(t *testing.T) {
	element := func(k uint32, first, second itemPointer) []byte {
		return testHNSWPage(testElement(itemPointer{100, uint16(k)}, itemPointer{k, 2}, float32(k)), testNeighborTuple(first, second))
	}
	index := map[int64][]byte{
		0: testHNSWMeta(1, itemPointer{1, 1}),
		1: element(1, itemPointer{2, 1}, itemPointer{}),
		2: element(2, itemPointer{1, 1}, itemPointer{3, 1}),
		3: element(3, itemPointer{2, 1}, itemPointer{5, 1}),
		4: element(4, itemPointer{3, 1}, itemPointer{5, 1}),
		5: element(5, itemPointer{3, 1}, itemPointer{}),
	}
	var rows []rowQuery
	for k := uint16(1); k <= 5; k++ {
		rows = append(rows, rowQuery{at: itemPointer{100, k}, value: []float32{float32(k)}})
	}
	walk := testWalk(t, index, 1000)
	if _, found, _ := walk.findWidening(context.Background(), []float32{4}, itemPointer{100, 4}); found {
		t.Fatal("the test's element 4 is reachable")
	}
	found, nearby, err := walk.locate(context.Background(), rows)
	if err != nil || len(found) != 5 || found[itemPointer{100, 4}] != 4 || nearby != 1 {
		t.Fatalf("locate = %v, %d nearby, %v; want all five, element 4 on block 4 found nearby", found, nearby, err)
	}
	found, nearby, err = testWalk(t, index, 1000).locate(context.Background(), rows[3:4])
	if err != nil || len(found) != 0 || nearby != 0 {
		t.Fatalf("alone: locate = %v, %d nearby, %v; want none", found, nearby, err)
	}
}
