package pgstore

import (
	"context"
	"errors"
)

// errPageBudget is returned when an index search would read more pages than its
// budget allows.
var errPageBudget = errors.New("the page budget of the index search is spent")

// indexPages reads an index's pages in batches and keeps those read.
type indexPages struct {
	read   func(ctx context.Context, blocks []int64) (map[int64][]byte, error)
	cached map[uint32][]byte
	reads  int64  // pages read
	budget int64  // pages that may be read
	size   uint32 // the index's pages: a block past them is absent
}

// indexPagesKept bounds the pages kept (64 MiB): past it, all but those
// a load asks for are dropped.
const indexPagesKept = 8192

// load reads those of blocks not kept yet, in one query. A block past
// the index's end reads as no page.
func (p *indexPages) load(ctx context.Context, blocks []uint32) error {
	var missing []int64
	seen := map[uint32]bool{}
	for _, b := range blocks {
		if _, ok := p.cached[b]; !ok && !seen[b] && b < p.size {
			seen[b] = true
			missing = append(missing, int64(b))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if p.reads+int64(len(missing)) > p.budget {
		return errPageBudget
	}
	got, err := p.read(ctx, missing)
	if err != nil {
		return err
	}
	p.reads += int64(len(missing))
	if len(p.cached)+len(missing) > indexPagesKept {
		kept := map[uint32][]byte{}
		for _, b := range blocks {
			if page, ok := p.cached[b]; ok {
				kept[b] = page
			}
		}
		p.cached = kept
	}
	for _, b := range missing {
		p.cached[uint32(b)] = got[b]
	}
	return nil
}
