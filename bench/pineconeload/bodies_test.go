package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBodySource_FreshIDsAreNewAtEveryUpsert: with fresh ids every body
// stays valid and names only ids no earlier body named; without, every
// upsert sends the batch's own bytes.
func TestBodySource_FreshIDsAreNewAtEveryUpsert(t *testing.T) {
	fresh, err := newUpsertBatch(20, 4, "ns", true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, src := range []*bodySource{fresh.source("rest"), fresh.source("rest")} {
		for range 3 {
			var body struct{ Vectors []struct{ ID string } }
			if err := json.Unmarshal(src.next(), &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Vectors) != 20 {
				t.Fatalf("%d vectors, want 20", len(body.Vectors))
			}
			for _, v := range body.Vectors {
				if seen[v.ID] || strings.HasPrefix(v.ID, strings.Repeat("0", stampWidth)) {
					t.Fatalf("id %s sent before, or never stamped", v.ID)
				}
				seen[v.ID] = true
			}
		}
	}
	grpc := fresh.source("grpc")
	first := string(grpc.next())
	if second := string(grpc.next()); second == first || len(second) != len(fresh.grpc) {
		t.Fatal("the gRPC message was not stamped anew, or changed length")
	}

	same, err := newUpsertBatch(20, 4, "ns", false)
	if err != nil {
		t.Fatal(err)
	}
	if src := same.source("rest"); &src.next()[0] != &same.rest[0] {
		t.Fatal("without fresh ids an upsert should send the batch's own bytes")
	}
}
