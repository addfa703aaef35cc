package emulator

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeVector feeds arbitrary bytes to the protobuf decoder. It must
// not panic, and what it accepts must survive encode/decode unchanged, so
// the decoder and encoder agree on every field.
func FuzzDecodeVector(f *testing.F) {
	f.Add(encodeVector(Vector{ID: "doc#1", Values: []float32{1, 2.5}}))
	f.Add(encodeVector(Vector{ID: "x", Sparse: &SparseValues{Indices: []uint32{1, 300}, Values: []float32{0.5, 1}},
		Metadata: map[string]any{"subject": "alice", "n": 2.0, "ok": true, "none": nil, "tags": []any{"a", 1.0}, "sub": map[string]any{"k": "v"}}}))
	f.Add([]byte{0x0a, 0x01, 0xff})
	f.Add([]byte{0x15, 0, 0, 0x80, 0x3f}) // one unpacked float
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b)
		if err != nil {
			return
		}
		once := encodeVector(v)
		v2, err := decodeVector(once)
		if err != nil {
			t.Fatalf("re-decoding an encoded vector failed: %v", err)
		}
		if twice := encodeVector(v2); !bytes.Equal(once, twice) {
			t.Fatalf("encode(decode(encode(v))) differs:\n%x\n%x", once, twice)
		}
	})
}

// FuzzGRPCRequests runs every gRPC request decoder on arbitrary bytes: each
// must return a value or an InvalidArgument error, never panic.
func FuzzGRPCRequests(f *testing.F) {
	f.Add(appendMessage(appendString(nil, 2, "ns"), 1, encodeVector(Vector{ID: "a", Values: []float32{1}})))
	f.Add(appendString(appendString(nil, 1, "id"), 2, "ns"))
	f.Add(appendMessage(appendVarint(nil, 2, 10), 3, encodeStruct(map[string]any{"subject": map[string]any{"$eq": "a"}})))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, o := range grpcOperations {
			if _, err := o.fromProto(b); err != nil {
				if e, ok := err.(*Error); !ok || e.Code != InvalidArgument {
					t.Fatalf("%s: decoder returned %v, want an InvalidArgument *Error", name, err)
				}
			}
		}
	})
}

// FuzzParseRecordsNDJSON checks the NDJSON record parser: no panic, every
// accepted record has an id and keeps no id field in its metadata, and the
// records written back as NDJSON parse to the same ids.
func FuzzParseRecordsNDJSON(f *testing.F) {
	f.Add([]byte("{\"_id\":\"r1\",\"chunk_text\":\"hello\",\"subject\":\"alice\"}\n{\"id\":\"r2\"}\n"))
	f.Add([]byte("\n\n{\"_id\":\"a\",\"id\":\"b\"}"))
	f.Add([]byte("{\"_id\":1}"))
	f.Add([]byte("null\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := parseRecordsNDJSON(body)
		if err != nil {
			return
		}
		var again bytes.Buffer
		for _, r := range recs {
			if r.ID == "" {
				t.Fatal("accepted a record with an empty id")
			}
			if _, ok := r.Metadata["_id"]; ok {
				t.Fatal("_id left in metadata")
			}
			fields := map[string]any{"_id": r.ID}
			for k, v := range r.Metadata {
				if k != "id" {
					fields[k] = v
				}
			}
			line, err := json.Marshal(fields)
			if err != nil {
				t.Fatalf("re-encoding record %q: %v", r.ID, err)
			}
			again.Write(append(line, '\n'))
		}
		recs2, err := parseRecordsNDJSON(again.Bytes())
		if err != nil {
			t.Fatalf("re-parsing accepted records: %v", err)
		}
		for i := range recs {
			if recs[i].ID != recs2[i].ID {
				t.Fatalf("record %d: id %q became %q", i, recs[i].ID, recs2[i].ID)
			}
		}
	})
}
