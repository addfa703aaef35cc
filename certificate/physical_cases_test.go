package certificate

import (
	"bytes"
	"math"
	"testing"
	"time"
)

// The physical section of v2 certificates (docs/certificate.md, "Physical
// state"): test vectors every verifier must give the same verdict and, for
// a valid one, the same physical line.

// testPhysical is a page scan of testPayload's PostgreSQL layer: 13 of its
// 27 pages, all in the HNSW index, still hold the deleted vectors' bytes.
func testPhysical(issued time.Time) *Physical {
	return &Physical{
		Status: PhysicalScanned,
		Method: "pageinspect's get_raw_page (the store role is a superuser); a page holds the records' bytes when it contains the subject's text or any 16-byte fragment of a deleted vector",
		At:     issued.Add(-1500 * time.Millisecond),
		Relations: []RelationPages{
			{Relation: "public.langchain_pg_embedding", Kind: "heap", Pages: 3, Scanned: 3, Coverage: CoverageAll, TookMS: 2},
			{Relation: "pg_toast.pg_toast_16390", Kind: "toast", Pages: 0, Scanned: 0, Coverage: CoverageAll},
			{Relation: "public.langchain_pg_embedding_pkey", Kind: "btree", Pages: 2, Scanned: 2, Coverage: CoverageAll, TookMS: 1},
			{Relation: "public.langchain_pg_embedding_embedding_idx", Kind: "hnsw", Pages: 22, Scanned: 22, Holding: 13, HoldingVector: 13, Coverage: CoverageAll, TookMS: 9},
		},
	}
}

// testPayloadV2 is testPayload with its PostgreSQL layer's page scan
// (ph) and its Pinecone layer not scanned: a v2 payload.
func testPayloadV2(t testing.TB, requestID string, issued time.Time, ph *Physical) Payload {
	t.Helper()
	p := testPayload(t, requestID, issued)
	p.Layers[0].Physical = ph
	p.Layers[1].Physical = &Physical{Status: PhysicalNotScanned, At: issued,
		Reason: "the layer does not scan its store's pages"}
	return p
}

// v2Cert is the operator's valid v2 certificate of ph, edited by edit.
func v2Cert(ph func() *Physical, edit func(p *Physical)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		p := ph()
		if edit != nil {
			edit(p)
		}
		return marshal(t, issue(t, f.op, testPayloadV2(t, "req-0042", testIssued, p), nil))
	}
}

// v2Edit signs, with the operator key, the v2 payload of testPhysical
// edited as JSON: edit gets its PostgreSQL layer.
func v2Edit(edit func(layer map[string]any)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		_, payload, err := Sign(f.op, testPayloadV2(t, "req-0042", testIssued, testPhysical(testIssued)))
		if err != nil {
			t.Fatal(err)
		}
		payload = editJSON(t, payload, func(p map[string]any) {
			edit(p["layers"].([]any)[0].(map[string]any))
		})
		return signedPayload(t, f.op, payload)
	}
}

// physicalEdit is v2Edit of the layer's physical section.
func physicalEdit(edit func(ph map[string]any)) func(t testing.TB, f *fixture) []byte {
	return v2Edit(func(layer map[string]any) { edit(layer["physical"].(map[string]any)) })
}

// hnsw is the HNSW index's relation in a physical section as JSON.
func hnsw(ph map[string]any) map[string]any {
	return ph["relations"].([]any)[3].(map[string]any)
}

func physicalCases() []verifyCase {
	scan := func() *Physical { return testPhysical(testIssued) }
	return []verifyCase{
		{name: "v2 pages scanned still hold the bytes", want: VerdictValid, cert: v2Cert(scan, nil),
			physical: "postgres public.langchain_pg_embedding: 13 of 27 pages scanned still hold the bytes; pinecone docs/default: not scanned"},
		{name: "v2 clean in all pages", want: VerdictValid, cert: v2Cert(scan, func(p *Physical) {
			p.Relations[3].Holding, p.Relations[3].HoldingVector = 0, 0
		}), physical: "postgres public.langchain_pg_embedding: clean in all 27 pages; pinecone docs/default: not scanned"},
		{name: "v2 clean in the pages of a sample", want: VerdictValid, cert: v2Cert(scan, func(p *Physical) {
			p.Relations[3].Holding, p.Relations[3].HoldingVector = 0, 0
			p.Relations[3].Pages, p.Relations[3].Coverage = 20000, CoverageSampled
		}), physical: "postgres public.langchain_pg_embedding: clean in the 27 pages scanned of 20005; pinecone docs/default: not scanned"},
		{name: "v2 scan not possible", want: VerdictValid, cert: v2Cert(func() *Physical {
			return &Physical{Status: PhysicalNotPossible, At: testIssued.Add(-time.Second),
				Reason: "the store role cannot read raw pages: GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) TO the store role"}
		}, nil), physical: "postgres public.langchain_pg_embedding: scan not possible; pinecone docs/default: not scanned"},
		{name: "v2 nothing deleted to look for", want: VerdictValid, cert: v2Cert(func() *Physical {
			return &Physical{Status: PhysicalNothingDeleted, At: testIssued, Reason: "no record was deleted here"}
		}, nil), physical: "postgres public.langchain_pg_embedding: nothing deleted to look for; pinecone docs/default: not scanned"},

		// Counts near 2^63 that are consistent: holding <= holding_vector +
		// holding_subject holds exactly, though that sum is beyond 64 bits.
		{name: "v2 vector and subject pages summing beyond 64 bits", want: VerdictValid, cert: physicalEdit(func(ph map[string]any) {
			rel := hnsw(ph)
			for _, count := range []string{"pages", "scanned", "holding", "holding_vector", "holding_subject"} {
				rel[count] = int64(math.MaxInt64)
			}
			ph["relations"] = []any{rel}
		}), physical: "postgres public.langchain_pg_embedding: 9223372036854775807 of 9223372036854775807 pages scanned still hold the bytes; pinecone docs/default: not scanned"},

		// Counts that cannot all be true.
		{name: "v2 more pages holding the bytes than scanned", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["holding"], hnsw(ph)["holding_vector"] = 23, 23
		})},
		{name: "v2 more pages scanned than the relation has", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["scanned"] = 23
		})},
		{name: "v2 coverage all with pages left unscanned", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["scanned"] = 21
		})},
		{name: "v2 relations under not_possible", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			ph["status"] = PhysicalNotPossible
		})},
		{name: "v2 scanned without relations", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			ph["relations"] = []any{}
		})},
		{name: "v2 status unknown", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			ph["status"] = "clean"
		})},
		{name: "v2 coverage unknown", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["coverage"] = "sampled"
		})},
		{name: "v2 more vector pages than pages holding the bytes", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["holding_vector"] = 14
		})},
		{name: "v2 pages holding neither vector nor subject", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["holding_vector"] = 12
		})},
		{name: "v2 negative time taken", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["took_ms"] = -1
		})},
		{name: "v2 physical null", want: VerdictMalformed, cert: v2Edit(func(layer map[string]any) {
			layer["physical"] = nil
		})},
		{name: "v2 scan time not RFC 3339", want: VerdictMalformed, cert: physicalEdit(func(ph map[string]any) {
			ph["at"] = "yesterday"
		})},

		// Members.
		{name: "v2 unknown member in physical", want: VerdictSchemaMismatch, cert: physicalEdit(func(ph map[string]any) {
			ph["residue_bytes"] = 4096
		})},
		{name: "v2 unknown member in a relation", want: VerdictSchemaMismatch, cert: physicalEdit(func(ph map[string]any) {
			hnsw(ph)["first_page"] = 7
		})},
		{name: "v2 relation without its coverage", want: VerdictSchemaMismatch, cert: physicalEdit(func(ph map[string]any) {
			delete(hnsw(ph), "coverage")
		})},
		{name: "v2 layer without a physical section", want: VerdictSchemaMismatch, cert: v2Edit(func(layer map[string]any) {
			delete(layer, "physical")
		})},
		{name: "v1 layer with a physical section", want: VerdictSchemaMismatch, cert: func(t testing.TB, f *fixture) []byte {
			_, payload, err := Sign(f.op, testPayloadV2(t, "req-0042", testIssued, testPhysical(testIssued)))
			if err != nil {
				t.Fatal(err)
			}
			return signedPayload(t, f.op, bytes.Replace(payload, []byte(SchemaV2), []byte(SchemaV1), 1))
		}},
	}
}

// TestSign_WritesV2OnlyWithAPhysicalSection: a payload without a physical
// section is signed v1 with no trace of one, so every certificate Lethe
// issued before keeps its bytes; one with a section is signed v2.
func TestSign_WritesV2OnlyWithAPhysicalSection(t *testing.T) {
	f := newFixture(t)
	_, v1, err := Sign(f.op, testPayload(t, "req-0042", testIssued))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(v1, []byte(`"schema":"`+SchemaV1+`"`)) || bytes.Contains(v1, []byte("physical")) {
		t.Errorf("without a physical section: %s; want v1 and no physical member", v1)
	}
	_, v2, err := Sign(f.op, testPayloadV2(t, "req-0042", testIssued, testPhysical(testIssued)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(v2, []byte(`"schema":"`+SchemaV2+`"`)) {
		t.Errorf("with a physical section: %s; want v2", v2)
	}
}

// TestSign_RefusesPhysicalSectionsVerifiersReject: Sign checks what Verify
// calls malformed or a schema mismatch in a physical section.
func TestSign_RefusesPhysicalSectionsVerifiersReject(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		edit func(p *Payload)
	}{
		{"v1 with a physical section", func(p *Payload) { p.Schema = SchemaV1 }},
		{"v2 with a layer without one", func(p *Payload) { p.Layers[1].Physical = nil; p.Schema = SchemaV2 }},
		{"more pages holding the bytes than scanned", func(p *Payload) { p.Layers[0].Physical.Relations[0].Holding = 4 }},
		{"relations under not_scanned", func(p *Payload) { p.Layers[0].Physical.Status = PhysicalNotScanned }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPayloadV2(t, "req-0042", testIssued, testPhysical(testIssued))
			tc.edit(&p)
			if _, _, err := Sign(f.op, p); err == nil {
				t.Fatal("Sign accepted the payload")
			}
		})
	}
}
