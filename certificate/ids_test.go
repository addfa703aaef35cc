package certificate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func refs(n int) []RecordRef {
	out := make([]RecordRef, n)
	for i := range out {
		out[i] = RecordRef{Store: "postgres", Table: "public.docs", ID: fmt.Sprintf("id-%03d", i)}
	}
	return out
}

func TestIDsRoot_IsRFC6962OverSortedLeaves(t *testing.T) {
	h := func(b ...[]byte) []byte {
		s := sha256.New()
		for _, x := range b {
			s.Write(x)
		}
		return s.Sum(nil)
	}
	leafA, leafB := []byte("pinecone\x00ns\x00a"), []byte("postgres\x00public.docs\x007")
	for _, tc := range []struct {
		name string
		refs []RecordRef
		want []byte
	}{
		{"no records: SHA-256 of nothing", nil, h()},
		{"one record: its leaf hash", []RecordRef{{"pinecone", "ns", "a"}}, h([]byte{0}, leafA)},
		{"two records in given order", []RecordRef{{"pinecone", "ns", "a"}, {"postgres", "public.docs", "7"}},
			h([]byte{1}, h([]byte{0}, leafA), h([]byte{0}, leafB))},
		{"two records in reverse order", []RecordRef{{"postgres", "public.docs", "7"}, {"pinecone", "ns", "a"}},
			h([]byte{1}, h([]byte{0}, leafA), h([]byte{0}, leafB))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := IDsRoot(tc.refs)
			if err != nil {
				t.Fatal(err)
			}
			if d.Count != int64(len(tc.refs)) || d.Root != hex.EncodeToString(tc.want) {
				t.Errorf("digest %+v, want count %d root %x", d, len(tc.refs), tc.want)
			}
		})
	}
}

func TestIDsRoot_RefusesBadRefs(t *testing.T) {
	for _, tc := range []struct {
		name string
		refs []RecordRef
		want string
	}{
		{"duplicate", append(refs(3), refs(3)[1]), "twice"},
		{"NUL in table", []RecordRef{{"postgres", "a\x00b", "1"}}, "NUL"},
		{"no store", []RecordRef{{"", "t", "1"}}, "must be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := IDsRoot(tc.refs); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestProveID_EveryRecordOfEveryTreeSize(t *testing.T) {
	for n := 1; n <= 17; n++ {
		rs := refs(n)
		slices.Reverse(rs) // the caller's order must not matter
		d, err := IDsRoot(rs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			p, err := ProveID(rs, r)
			if err != nil {
				t.Fatalf("n=%d %v: %v", n, r, err)
			}
			if err := CheckID(d, r, p); err != nil {
				t.Fatalf("n=%d %v: %v", n, r, err)
			}
		}
	}
}

func TestCheckID_RejectsWhatWasNotDeleted(t *testing.T) {
	rs := refs(9)
	d, err := IDsRoot(rs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ProveID(rs, rs[4])
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(p.Path)
	flipped[0] = strings.Repeat("0", 64)
	for _, tc := range []struct {
		name   string
		digest IDsDigest
		ref    RecordRef
		proof  IDProof
	}{
		{"another record with this proof", d, rs[5], p},
		{"same id in another table", d, RecordRef{"postgres", "public.other", rs[4].ID}, p},
		{"tampered path", d, rs[4], IDProof{Index: p.Index, Path: flipped}},
		{"another index", d, rs[4], IDProof{Index: p.Index + 1, Path: p.Path}},
		{"index beyond the count", d, rs[4], IDProof{Index: 99, Path: p.Path}},
		{"a smaller count", IDsDigest{Count: d.Count - 1, Root: d.Root}, rs[4], p},
		{"path not hex", d, rs[4], IDProof{Index: p.Index, Path: []string{"zz"}}},
		{"root not hex", IDsDigest{Count: d.Count, Root: "root"}, rs[4], p},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckID(tc.digest, tc.ref, tc.proof); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := ProveID(rs, RecordRef{"postgres", "public.docs", "absent"}); err == nil {
		t.Error("ProveID proved an absent record")
	}
}
