package pgstore

import (
	"strings"
	"testing"
)

func TestFingerprint_TargetsByRelationKind(t *testing.T) {
	f := newFingerprint("alice")
	f.blocks[3] = true
	f.toast.blocks = map[int64]bool{7: true, 8: true}
	if got := f.targets(pageRelation{kind: "heap", heap: true}); len(got) != 1 || !got[3] {
		t.Fatalf("the table itself: %v, want the deleted rows' block", got)
	}
	if got := f.targets(pageRelation{kind: "toast"}); len(got) != 2 || !got[7] || !got[8] {
		t.Fatalf("the TOAST table: %v, want the chunks' blocks", got)
	}
	for _, kind := range []string{"hnsw", "btree", "ivfflat", "gin"} {
		if got := f.targets(pageRelation{kind: kind}); got != nil {
			t.Fatalf("an index (%s) has no targeted pages: %v", kind, got)
		}
	}
}

func TestFingerprint_TargetsTextSaysWhatWasNotTargeted(t *testing.T) {
	f := newFingerprint("alice")
	p := PhysicalScan{SamplePages: 5}
	toast := pageRelation{name: "pg_toast.pg_toast_1", kind: "toast"}
	if got := f.targetsText(toast, p); !strings.Contains(got, "pg_toast.pg_toast_1 (5 pages sampled): no page targeted (the TOAST table was small enough") {
		t.Fatalf("nothing located: %q", got)
	}
	f.toast = toastTargets{relation: toast.name, blocks: map[int64]bool{1: true}, values: 4, heapRead: 2, heapSkipped: 3, dropped: 6, missing: 1}
	f.toast.notLocated.add("the store role cannot read pg_toast.pg_toast_1")
	f.toast.notLocated.add("the store role cannot read pg_toast.pg_toast_1")
	got := f.targetsText(toast, p)
	for _, want := range []string{
		"pg_toast.pg_toast_1 (5 pages sampled): 1 pages targeted, where the deleted rows' 4 out-of-line values had their chunks",
		"capped: 6 more pages held them",
		"capped: the rows in 3 of 5 heap pages were not read for their pointers",
		"1 rows had moved from their ctid",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q does not say %q", got, want)
		}
	}
	if strings.Count(got, "TOAST chunks not targeted") != 1 {
		t.Fatalf("a reason is said once: %q", got)
	}
	if got := f.targetsText(pageRelation{name: "docs_hnsw", kind: "hnsw"}, p); !strings.Contains(got, "no page targeted") {
		t.Fatalf("an index: %q", got)
	}
}

// TestFingerprint_VectorIndexTargetsText: an HNSW or IVFFlat index's
// targets say how the entries were found, how many of the rows, and what
// was capped or not possible, each reason once.
func TestFingerprint_VectorIndexTargetsText(t *testing.T) {
	f := newFingerprint("alice")
	p := PhysicalScan{SamplePages: 5}
	hnsw := pageRelation{oid: 7, name: "docs_hnsw", kind: "hnsw"}
	ivf := pageRelation{oid: 8, name: "docs_ivf", kind: "ivfflat"}
	f.indexes = map[uint32]*indexTargets{
		7: {kind: "hnsw", blocks: map[int64]bool{3: true, 9: true}, rows: 5, located: 4, nearby: 1, dropped: 2, pagesRead: 812},
		8: {kind: "ivfflat", blocks: map[int64]bool{4: true}, rows: 5, located: 1, pagesRead: 40},
	}
	f.indexes[7].notLocated.add("capped: the search may read 4096 pages per row")
	f.indexes[7].notLocated.add("capped: the search may read 4096 pages per row")
	got := f.targetsText(hnsw, p)
	for _, want := range []string{
		"docs_hnsw (5 pages sampled): 2 pages targeted, where the entries of 4 of the 5 deleted rows were (found before the delete by walking the graph towards each row's value: 812 index pages read",
		"1 of them no walk reached, found on the index pages around the elements of the rows beside them in the heap",
		"capped: 2 more entries were found and not targeted",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q does not say %q", got, want)
		}
	}
	if strings.Count(got, "entries not targeted: capped") != 1 {
		t.Fatalf("a reason is said once: %q", got)
	}
	if got := f.targetsText(ivf, p); !strings.Contains(got, "1 pages targeted, where the entries of 1 of the 5 deleted rows were (found before the delete by reading the lists whose centers are nearest each row's value") {
		t.Fatalf("IVFFlat: %q", got)
	}
	if got := f.targets(hnsw); len(got) != 2 || !got[3] || !got[9] {
		t.Fatalf("targets of the HNSW index: %v", got)
	}
	if got := f.targetsText(pageRelation{oid: 9, name: "docs_owner", kind: "btree"}, p); !strings.Contains(got, "no page targeted (no map leads") {
		t.Fatalf("a btree: %q", got)
	}
}
