package pgstore

import "fmt"

// targets are the blocks of r a scan reads beside its sample when r is too
// large to read whole: for the table itself the blocks its deleted rows
// were in, for its TOAST table the blocks their chunks were in, for an
// HNSW or IVFFlat index the blocks their entries were in, none of
// another index (no map leads from a heap row to its btree or GIN
// entries).
func (f *fingerprint) targets(r pageRelation) map[int64]bool {
	switch {
	case r.heap:
		return f.blocks
	case r.kind == "toast":
		return f.toast.blocks
	case f.indexes[r.oid] != nil:
		return f.indexes[r.oid].blocks
	}
	return nil
}

// targetsText says, for the scan's method, which pages of r, a relation
// too large to read whole, were read beside p's sample.
func (f *fingerprint) targetsText(r pageRelation, p PhysicalScan) string {
	head := fmt.Sprintf("%s (%d pages sampled)", r.name, p.SamplePages)
	switch {
	case r.heap:
		return fmt.Sprintf("%s: %d pages targeted, where the deleted rows were", head, len(f.blocks))
	case r.kind == "toast":
		return f.toast.describe(head)
	case r.kind == "hnsw" || r.kind == "ivfflat":
		return f.indexes[r.oid].describe(head)
	}
	return head + ": no page targeted (no map leads from a row to its index entries)"
}
