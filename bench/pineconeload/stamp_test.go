package main

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// With -fresh-ids every upsert names ids no other did, and its bytes stay
// valid JSON and a well-formed UpsertRequest.
func TestFreshIDs_EveryUpsertNamesNewIDs(t *testing.T) {
	batch, err := newUpsertBatch(20, 8, "bench", true)
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Uint64
	rest, err := newBody(batch.rest, 20, true, &next)
	if err != nil {
		t.Fatal(err)
	}
	grpc, err := newBody(batch.grpc, 20, true, &next)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 3 {
		b, done := rest.get()
		var req struct {
			Vectors []struct{ ID string } `json:"vectors"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		for _, v := range req.Vectors {
			if seen[v.ID] {
				t.Fatalf("id %s sent twice", v.ID)
			}
			seen[v.ID] = true
		}
		done()
		m, done := grpc.get()
		for len(m) > 0 {
			num, typ, n := protowire.ConsumeField(m)
			if n < 0 {
				t.Fatalf("malformed UpsertRequest: %v", protowire.ParseError(n))
			}
			if num == 1 && typ == protowire.BytesType {
				vector, _ := protowire.ConsumeBytes(m[protowire.SizeTag(1):])
				_, _, tagLen := protowire.ConsumeTag(vector)
				id, _ := protowire.ConsumeString(vector[tagLen:])
				if seen[id] {
					t.Fatalf("gRPC id %s sent twice", id)
				}
				seen[id] = true
			}
			m = m[n:]
		}
		done()
	}
	if len(seen) != 3*2*20 {
		t.Fatalf("%d distinct ids, want %d", len(seen), 3*2*20)
	}
	same, _ := newUpsertBatch(20, 8, "bench", false)
	if fixed, _ := newBody(same.rest, 20, false, &next); len(fixed.stamps) != 0 {
		t.Fatal("without -fresh-ids the body is sent as it is")
	}
}
