package pgstore

import (
	"context"
	"sort"
)

// rowQuery is a deleted row's heap address and the value its element
// holds.
type rowQuery struct {
	at    itemPointer
	value []float32
}

// Reading nearby pages: a missed row's element is looked for in the index
// pages from hnswNearbyMargin before to hnswNearbyMargin after the
// elements of the rows beside it in the heap, when those are at most
// hnswNearbySpan pages apart.
const (
	hnswNearbySpan   = 64
	hnswNearbyMargin = 4
)

// locate finds the elements of rows, by block: first by walking the graph
// towards each value; then, for the rows no walk reached (an element that
// no other element links to cannot be reached), by reading the index pages
// around the elements of the rows next to it in the heap: rows written
// together are inserted together, and an insert puts its element on the
// index's last page with room. nearby counts the rows found the second
// way. On an error, what was found so far is returned with it.
func (w *hnswWalk) locate(ctx context.Context, rows []rowQuery) (found map[itemPointer]uint32, nearby int, err error) {
	found = map[itemPointer]uint32{}
	var missed []itemPointer
	for _, row := range rows {
		block, ok, err := w.findWidening(ctx, row.value, row.at)
		if err != nil {
			return found, 0, err
		}
		if ok {
			found[row.at] = block
		} else {
			missed = append(missed, row.at)
		}
	}
	if len(missed) == 0 || len(found) == 0 {
		return found, 0, nil
	}
	located := make([]itemPointer, 0, len(found))
	for at := range found {
		located = append(located, at)
	}
	sort.Slice(located, func(i, j int) bool { return heapBefore(located[i], located[j]) })
	for _, at := range missed {
		first, last, ok := nearbyBlocks(located, found, at)
		if !ok {
			continue
		}
		block, ok, err := w.readAround(ctx, first, last, at)
		if err != nil {
			return found, nearby, err
		}
		if ok {
			found[at] = block
			nearby++
		}
	}
	return found, nearby, nil
}

func heapBefore(a, b itemPointer) bool {
	return a.block < b.block || (a.block == b.block && a.line < b.line)
}

// nearbyBlocks is the range of index blocks to read for the row at: around
// the elements of the located rows just before and after it in the heap.
func nearbyBlocks(located []itemPointer, found map[itemPointer]uint32, at itemPointer) (first, last uint32, ok bool) {
	i := sort.Search(len(located), func(i int) bool { return !heapBefore(located[i], at) })
	var blocks []uint32
	if i > 0 {
		blocks = append(blocks, found[located[i-1]])
	}
	if i < len(located) {
		blocks = append(blocks, found[located[i]])
	}
	first, last = blocks[0], blocks[0]
	for _, b := range blocks {
		first, last = min(first, b), max(last, b)
	}
	if last-first > hnswNearbySpan {
		return 0, 0, false
	}
	return max(first, hnswNearbyMargin+1) - hnswNearbyMargin, last + hnswNearbyMargin, true
}

// readAround reads blocks first to last and looks for the element
// pointing at heap among all their tuples.
func (w *hnswWalk) readAround(ctx context.Context, first, last uint32, heap itemPointer) (uint32, bool, error) {
	blocks := make([]uint32, 0, last-first+1)
	for b := first; b <= last; b++ {
		blocks = append(blocks, b)
	}
	if err := w.pages.load(ctx, blocks); err != nil {
		return 0, false, err
	}
	for _, b := range blocks {
		page := w.pages.cached[b]
		if !hasPageID(page, hnswPageID) {
			continue
		}
		for line := 1; line <= linePointers(page); line++ {
			if e, ok := parseHNSWElement(pageTuple(page, uint16(line)), w.distance.elemSize); ok && e.holds(heap) {
				return b, true, nil
			}
		}
	}
	return 0, false, nil
}
