package pcstore

import (
	"context"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
)

// IndexedLSN asks namespace ns for the x-pinecone-max-indexed-lsn of one
// read: a list of at most one id, the cheapest read Pinecone stamps. ok
// is false when the answer carried no such header (an API version or a
// gateway that does not send it). Pinecone numbers each namespace's
// writes in its own sequence, and a read answered by a replica that has
// not yet indexed the latest writes reports a lower number than the last
// write's request LSN: the caller compares it only with what reads
// reported before (pcwing's restore detection).
func (ix *Index) IndexedLSN(ctx context.Context, ns string) (lsn uint64, ok bool, err error) {
	ctx, seen := withLSN(ctx)
	if ix.docs != nil {
		var discard struct{}
		if err := ix.docs.post(ctx, ix.name, ns, "list", map[string]any{"limit": 1}, &discard); err != nil {
			return 0, false, err
		}
	} else {
		limit := uint32(1)
		if _, err := ix.namespace(ns).ListVectors(ctx, &pinecone.ListVectorsRequest{Limit: &limit}); err != nil {
			return 0, false, ix.failed("list", ns, err)
		}
	}
	lsn, ok = seen.readsIndexed()
	return lsn, ok, nil
}
