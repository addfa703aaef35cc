package pgstore

import "context"

// hnswWalk searches an HNSW index's graph for the element pointing at a
// heap tuple, reading its pages as pgvector's own search does: greedily
// down the upper layers from the entry point, then a beam of ef on layer
// 0 towards the tuple's value. A value's element is nearest to it, so the
// search ends at it unless the graph has no path there.
type hnswWalk struct {
	pages    *indexPages
	meta     hnswMeta
	distance indexDistance
	values   []float32 // scratch for decoded values
}

// walkStep is an element reached, and its distance from the query.
type walkStep struct {
	at       itemPointer
	distance float64
}

// find returns the block of the element of heap, whose value is query.
func (w *hnswWalk) find(ctx context.Context, query []float32, heap itemPointer, ef int) (uint32, bool, error) {
	if w.meta.entry.line == 0 {
		return 0, false, nil // an empty index
	}
	steps, hit, err := w.evaluate(ctx, []itemPointer{w.meta.entry}, query, heap)
	if err != nil || hit != nil || len(steps) == 0 {
		return blockOf(hit), hit != nil, err
	}
	current := steps[0]
	for layer := w.meta.entryLevel; layer >= 1; layer-- {
		for improved := true; improved; {
			improved = false
			next, err := w.neighbors(ctx, current.at, layer)
			if err != nil {
				return 0, false, err
			}
			steps, hit, err := w.evaluate(ctx, next, query, heap)
			if err != nil || hit != nil {
				return blockOf(hit), hit != nil, err
			}
			for _, s := range steps {
				if s.distance < current.distance {
					current, improved = s, true
				}
			}
		}
	}
	return w.searchLayer0(ctx, current, query, heap, ef)
}

// searchLayer0 is the beam search on layer 0 from start.
func (w *hnswWalk) searchLayer0(ctx context.Context, start walkStep, query []float32, heap itemPointer, ef int) (uint32, bool, error) {
	visited := map[itemPointer]bool{start.at: true}
	candidates, results := []walkStep{start}, []walkStep{start}
	for len(candidates) > 0 {
		nearest := 0
		for i, c := range candidates {
			if c.distance < candidates[nearest].distance {
				nearest = i
			}
		}
		c := candidates[nearest]
		candidates = append(candidates[:nearest], candidates[nearest+1:]...)
		if farthest := farthestOf(results); len(results) >= ef && c.distance > results[farthest].distance {
			break
		}
		next, err := w.neighbors(ctx, c.at, 0)
		if err != nil {
			return 0, false, err
		}
		unseen := next[:0]
		for _, n := range next {
			if !visited[n] {
				visited[n] = true
				unseen = append(unseen, n)
			}
		}
		steps, hit, err := w.evaluate(ctx, unseen, query, heap)
		if err != nil || hit != nil {
			return blockOf(hit), hit != nil, err
		}
		for _, s := range steps {
			farthest := farthestOf(results)
			if len(results) < ef || s.distance < results[farthest].distance {
				candidates, results = append(candidates, s), append(results, s)
				if len(results) > ef {
					results = append(results[:farthest], results[farthest+1:]...)
				}
			}
		}
	}
	return 0, false, nil
}

func farthestOf(steps []walkStep) int {
	out := 0
	for i, s := range steps {
		if s.distance > steps[out].distance {
			out = i
		}
	}
	return out
}

func blockOf(at *itemPointer) uint32 {
	if at == nil {
		return 0
	}
	return at.block
}

// evaluate reads the elements at, and returns their distances from query,
// or the one among them pointing at heap.
func (w *hnswWalk) evaluate(ctx context.Context, at []itemPointer, query []float32, heap itemPointer) ([]walkStep, *itemPointer, error) {
	blocks := make([]uint32, len(at))
	for i, a := range at {
		blocks[i] = a.block
	}
	if err := w.pages.load(ctx, blocks); err != nil {
		return nil, nil, err
	}
	out := make([]walkStep, 0, len(at))
	for _, a := range at {
		e, ok := w.element(a)
		if !ok {
			continue
		}
		if e.holds(heap) {
			return nil, &a, nil
		}
		w.values = vectorValues(e.value, w.distance.elemSize, w.values)
		out = append(out, walkStep{at: a, distance: w.distance.distance(query, w.values)})
	}
	return out, nil, nil
}

// element parses the element at a from its kept page.
func (w *hnswWalk) element(a itemPointer) (hnswElement, bool) {
	page := w.pages.cached[a.block]
	if !hasPageID(page, hnswPageID) {
		return hnswElement{}, false
	}
	return parseHNSWElement(pageTuple(page, a.line), w.distance.elemSize)
}

// neighbors returns the element at's neighbors on layer.
func (w *hnswWalk) neighbors(ctx context.Context, at itemPointer, layer int) ([]itemPointer, error) {
	if err := w.pages.load(ctx, []uint32{at.block}); err != nil {
		return nil, err
	}
	e, ok := w.element(at)
	if !ok {
		return nil, nil
	}
	if err := w.pages.load(ctx, []uint32{e.neighbors.block}); err != nil {
		return nil, err
	}
	page := w.pages.cached[e.neighbors.block]
	if !hasPageID(page, hnswPageID) {
		return nil, nil
	}
	return hnswNeighbors(pageTuple(page, e.neighbors.line), e.level, layer, w.meta.m), nil
}

// hnswBeams are the beam widths a walk tries, each only when the one
// before did not reach the element.
var hnswBeams = []int{40, 200, 1000}

// findWidening is find with each beam of hnswBeams until one reaches the
// element.
func (w *hnswWalk) findWidening(ctx context.Context, query []float32, heap itemPointer) (uint32, bool, error) {
	for _, ef := range hnswBeams {
		block, found, err := w.find(ctx, query, heap, ef)
		if err != nil || found {
			return block, found, err
		}
	}
	return 0, false, nil
}
