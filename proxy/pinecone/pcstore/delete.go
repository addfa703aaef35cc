package pcstore

import "context"

// deleteIDs deletes ids (at most chunkSize) from namespace ns through the
// index's API, and remembers the delete's request LSN when the index
// sends one, for verifying absence.
func (ix *Index) deleteIDs(ctx context.Context, ns string, ids []string) error {
	dctx, seen := withLSN(ctx)
	var applied func(uint64)
	if ix.watch != nil {
		applied = ix.watch(ns)
	}
	if ix.docs != nil {
		if err := ix.deleteDocuments(dctx, ns, ids); err != nil {
			return err
		}
	} else if err := ix.namespace(ns).DeleteVectorsById(dctx, ids); err != nil {
		return ix.failed("delete", ns, err)
	}
	if lsn, ok := seen.deleteRequestLSN(); ok {
		ix.deleted(ns, lsn)
		if applied != nil {
			applied(lsn)
		}
	}
	return nil
}

// present counts the records among ids (at most chunkSize) that
// namespace ns still holds. The reads' LSN headers go to ctx's lsnSeen.
func (ix *Index) present(ctx context.Context, ns string, ids []string) (int, error) {
	if ix.docs != nil {
		got, err := ix.fetchDocuments(ctx, ns, ids, nil)
		return len(got), err
	}
	got, err := ix.namespace(ns).FetchVectors(ctx, ids)
	if err != nil {
		return 0, ix.failed("fetch", ns, err)
	}
	return len(got.Vectors), nil
}
