package pcstore

import (
	"context"
	"slices"
)

// Existing reports which of ids namespace ns holds now, fetching them by
// id in chunks (vectors or documents, as the index's api says). It is
// what recovery asks about the records of a write whose answer never
// came. A record written but not yet visible to fetch reads as absent:
// the caller decides how long to wait before trusting an absence.
func (ix *Index) Existing(ctx context.Context, ns string, ids []string) (map[string]bool, error) {
	found := map[string]bool{}
	for chunk := range slices.Chunk(ids, chunkSize) {
		if ix.docs != nil {
			got, err := ix.fetchDocuments(ctx, ns, chunk, nil)
			if err != nil {
				return nil, err
			}
			for _, v := range got {
				if v != nil {
					found[v.Id] = true
				}
			}
			continue
		}
		got, err := ix.namespace(ns).FetchVectors(ctx, chunk)
		if err != nil {
			return nil, ix.failed("fetch", ns, err)
		}
		for id, v := range got.Vectors {
			if v != nil {
				found[id] = true
			}
		}
	}
	return found, nil
}
