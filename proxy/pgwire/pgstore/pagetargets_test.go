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
	f.toast.refuse("the store role cannot read pg_toast.pg_toast_1")
	f.toast.refuse("the store role cannot read pg_toast.pg_toast_1")
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
