package pcstore

import (
	"context"
	"slices"
)

// Presence is one read of which records a namespace holds, with how far
// the index had indexed when it answered.
type Presence struct {
	Found map[string]bool // the ids read present
	// IndexedLSN is the lowest x-pinecone-max-indexed-lsn the reads
	// carried. Stamped is false when a read came without the header;
	// IndexedLSN then means nothing, and an absence says nothing of the
	// writes the index had not yet indexed.
	IndexedLSN uint64
	Stamped    bool
}

// ReadPresence fetches ids from namespace ns by id, in chunks of 1,000,
// each fetch paced by Config.Pace, and reports which are present and the
// reads' LSN headers. It is what the wing asks after a delete by filter:
// an id absent from reads indexed past the delete's request LSN is gone.
func (ix *Index) ReadPresence(ctx context.Context, ns string, ids []string) (Presence, error) {
	rctx, seen := withLSN(ctx)
	found := map[string]bool{}
	for chunk := range slices.Chunk(ids, chunkSize) {
		if err := ix.wait(ctx); err != nil {
			return Presence{}, err
		}
		got, err := ix.Existing(rctx, ns, chunk)
		if err != nil {
			return Presence{}, err
		}
		for id := range got {
			found[id] = true
		}
	}
	indexed, stamped := seen.readsIndexed()
	return Presence{Found: found, IndexedLSN: indexed, Stamped: stamped}, nil
}
