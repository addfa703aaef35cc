package pgstore

import (
	"context"
	"sort"
)

// An IVFFlat entry is in the list whose center is nearest its value (an
// insert compares the value with every center as the operator class
// does). ivfflatProbes lists, nearest first, are read for a row before it
// is given up; ivfflatReadAhead pages of a chain are read per query (a
// list's pages are mostly consecutive).
const (
	ivfflatProbes    = 3
	ivfflatReadAhead = 16
)

// ivfflatSearch finds the entries of heap rows in an IVFFlat index by
// reading its lists' pages.
type ivfflatSearch struct {
	pages    *indexPages
	distance indexDistance
	lists    []ivfflatList
	values   []float32 // scratch for decoded centers
}

// readLists reads the list pages, from block 1 along their chain, until
// count lists are read.
func (v *ivfflatSearch) readLists(ctx context.Context, count int) error {
	seen := map[uint32]bool{}
	for block, more := uint32(1), true; more && len(v.lists) < count && !seen[block]; {
		seen[block] = true
		if err := v.pages.load(ctx, []uint32{block}); err != nil {
			return err
		}
		page := v.pages.cached[block]
		v.lists = append(v.lists, ivfflatLists(page, v.distance.elemSize)...)
		block, more = ivfflatNext(page)
	}
	return nil
}

// nearestLists returns the indexes in v.lists of the n lists whose
// centers are nearest query, nearest first.
func (v *ivfflatSearch) nearestLists(query []float32, n int) []int {
	order := make([]int, len(v.lists))
	distances := make([]float64, len(v.lists))
	for i, l := range v.lists {
		order[i] = i
		v.values = vectorValues(l.center, v.distance.elemSize, v.values)
		distances[i] = v.distance.distance(query, v.values)
	}
	sort.SliceStable(order, func(a, b int) bool { return distances[order[a]] < distances[order[b]] })
	return order[:min(n, len(order))]
}

// locate returns the block of each row's entry: the chain of each row's
// nearest list is read, then of the next nearest for the rows not found,
// up to ivfflatProbes lists. On an error, what was found so far is
// returned with it.
func (v *ivfflatSearch) locate(ctx context.Context, rows []rowQuery) (map[itemPointer]uint32, error) {
	found := map[itemPointer]uint32{}
	probes := make(map[itemPointer][]int, len(rows))
	for _, row := range rows {
		probes[row.at] = v.nearestLists(row.value, ivfflatProbes)
	}
	for probe := range ivfflatProbes {
		byList := map[int][]itemPointer{}
		for at, lists := range probes {
			if _, ok := found[at]; !ok && probe < len(lists) {
				byList[lists[probe]] = append(byList[lists[probe]], at)
			}
		}
		for list, wanted := range byList {
			if err := v.readChain(ctx, v.lists[list].start, wanted, found); err != nil {
				return found, err
			}
		}
	}
	return found, nil
}

// readChain reads the entry pages from start along their chain, noting in
// found the block of each of wanted's entries, until all are found or the
// chain ends.
func (v *ivfflatSearch) readChain(ctx context.Context, start uint32, wanted []itemPointer, found map[itemPointer]uint32) error {
	left := len(wanted)
	seen := map[uint32]bool{}
	for block, more := start, true; more && left > 0 && !seen[block]; {
		seen[block] = true
		if _, ok := v.pages.cached[block]; !ok {
			ahead := make([]uint32, 0, ivfflatReadAhead)
			for b := block; b < block+ivfflatReadAhead && b < v.pages.size; b++ {
				ahead = append(ahead, b)
			}
			if err := v.pages.load(ctx, ahead); err != nil {
				return err
			}
		}
		page := v.pages.cached[block]
		for _, at := range wanted {
			if _, ok := found[at]; !ok && ivfflatHolds(page, at) {
				found[at] = block
				left--
			}
		}
		block, more = ivfflatNext(page)
	}
	return nil
}
