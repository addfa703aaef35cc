package certificate

import (
	"bytes"
	"testing"
	"time"
)

// The horizon of v3 certificates (docs/certificate.md, "Erasure
// horizon"): test vectors every verifier must give the same verdict and,
// for a valid one, the same horizon line.

// testHorizon is the horizon of testPayload's two stores: one of each
// status, and every kind of copy.
func testHorizon(issued time.Time) []Horizon {
	return []Horizon{
		{Store: StorePostgres, Copy: HorizonPGWAL, Status: HorizonConditional,
			Basis: "the delete is at or before LSN 0/3000148; its segment can be recycled after the next checkpoint, once replication slot lethe_app (restart_lsn 0/2FFF000) advances past 0/3000148"},
		{Store: StorePostgres, Copy: HorizonWALArchive, Status: HorizonDated, Until: HorizonAt(issued.AddDate(0, 0, 30)),
			Basis: "declared retention 30d (postgres.retention.wal_archive) after the delete"},
		{Store: StorePostgres, Copy: HorizonBackups, Status: HorizonUnknown,
			Basis: "not declared: set postgres.retention.backups"},
		{Store: StorePostgres, Copy: HorizonReplicas, Status: HorizonUnknown,
			Basis: "no standby is visible in pg_stat_replication (the store role needs pg_monitor to see them)"},
		{Store: StorePinecone, Copy: HorizonProviderPurge, Status: HorizonDated, Until: HorizonAt(issued.AddDate(0, 0, 90)),
			Basis: "Pinecone keeps deleted data up to 90 days before it is permanently deleted"},
	}
}

const testHorizonLine = "postgres pg_wal: until a condition holds; postgres wal_archive: until 2026-07-01T12:00:00Z; " +
	"postgres backups: unknown; postgres replicas: unknown; pinecone provider_purge: until 2026-08-30T12:00:00Z"

// testPayloadV3 is testPayloadV2 with its horizon: a v3 payload.
func testPayloadV3(t testing.TB, requestID string, issued time.Time) Payload {
	t.Helper()
	p := testPayloadV2(t, requestID, issued, testPhysical(issued))
	p.Horizon = testHorizon(issued)
	return p
}

// v3Cert is the operator's valid v3 certificate, its payload edited by edit.
func v3Cert(edit func(p *Payload)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		p := testPayloadV3(t, "req-0042", testIssued)
		if edit != nil {
			edit(&p)
		}
		return marshal(t, issue(t, f.op, p, nil))
	}
}

// v3Edit signs, with the operator key, the v3 payload edited as JSON.
func v3Edit(edit func(p map[string]any)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		_, payload, err := Sign(f.op, testPayloadV3(t, "req-0042", testIssued))
		if err != nil {
			t.Fatal(err)
		}
		return signedPayload(t, f.op, editJSON(t, payload, edit))
	}
}

// horizonEntry is v3Edit of horizon[i].
func horizonEntry(i int, edit func(h map[string]any)) func(t testing.TB, f *fixture) []byte {
	return v3Edit(func(p map[string]any) { edit(p["horizon"].([]any)[i].(map[string]any)) })
}

const testPhysicalLine = "postgres public.langchain_pg_embedding: 13 of 27 pages scanned still hold the bytes; pinecone docs/default: not scanned"

func horizonCases() []verifyCase {
	return []verifyCase{
		{name: "v3 horizon dated, conditional and unknown", want: VerdictValid, cert: v3Cert(nil),
			physical: testPhysicalLine, horizon: testHorizonLine},
		{name: "v3 horizon of one store", want: VerdictValid, cert: v3Cert(func(p *Payload) {
			p.Horizon = p.Horizon[4:]
		}), physical: testPhysicalLine, horizon: "pinecone provider_purge: until 2026-08-30T12:00:00Z"},

		// The horizon line prints until as signed, offset and fraction and all.
		{name: "v3 horizon until written with an offset", want: VerdictValid, cert: v3Cert(func(p *Payload) {
			p.Horizon = p.Horizon[4:]
			p.Horizon[0].Until = "2026-08-30T14:00:00.5+02:00"
		}), physical: testPhysicalLine, horizon: "pinecone provider_purge: until 2026-08-30T14:00:00.5+02:00"},

		// Statements that cannot be true, or are not the schema's.
		{name: "v3 empty horizon", want: VerdictMalformed, cert: v3Edit(func(p map[string]any) {
			p["horizon"] = []any{}
		})},
		{name: "v3 dated without a date", want: VerdictMalformed, cert: horizonEntry(1, func(h map[string]any) {
			h["until"] = ""
		})},
		{name: "v3 dated with a date not RFC 3339", want: VerdictMalformed, cert: horizonEntry(1, func(h map[string]any) {
			h["until"] = "in 30 days"
		})},
		{name: "v3 unknown with a date", want: VerdictMalformed, cert: horizonEntry(2, func(h map[string]any) {
			h["until"] = "2026-07-01T12:00:00Z"
		})},
		{name: "v3 status not known", want: VerdictMalformed, cert: horizonEntry(0, func(h map[string]any) {
			h["status"] = "soon"
		})},
		{name: "v3 copy not known", want: VerdictMalformed, cert: horizonEntry(0, func(h map[string]any) {
			h["copy"] = "tape"
		})},
		{name: "v3 copy of another store", want: VerdictMalformed, cert: horizonEntry(4, func(h map[string]any) {
			h["store"] = StorePostgres
		})},
		{name: "v3 store outside the scope", want: VerdictMalformed, cert: v3Edit(func(p map[string]any) {
			p["scope"] = p["scope"].([]any)[1:]
			p["layers"] = p["layers"].([]any)[1:]
			p["deleted_ids"].(map[string]any)["count"] = 1
			p["horizon"] = p["horizon"].([]any)[1:]
		})},
		{name: "v3 empty basis", want: VerdictMalformed, cert: horizonEntry(2, func(h map[string]any) {
			h["basis"] = ""
		})},
		{name: "v3 until null", want: VerdictMalformed, cert: horizonEntry(2, func(h map[string]any) {
			h["until"] = nil
		})},
		{name: "v3 horizon not an array", want: VerdictMalformed, cert: v3Edit(func(p map[string]any) {
			p["horizon"] = map[string]any{}
		})},

		// Members.
		{name: "v3 unknown member in a horizon entry", want: VerdictSchemaMismatch, cert: horizonEntry(0, func(h map[string]any) {
			h["lsn"] = "0/3000148"
		})},
		{name: "v3 horizon entry without its until", want: VerdictSchemaMismatch, cert: horizonEntry(0, func(h map[string]any) {
			delete(h, "until")
		})},
		{name: "v3 without a horizon", want: VerdictSchemaMismatch, cert: v3Edit(func(p map[string]any) {
			delete(p, "horizon")
		})},
		{name: "v3 layer without a physical section", want: VerdictSchemaMismatch, cert: v3Edit(func(p map[string]any) {
			delete(p["layers"].([]any)[1].(map[string]any), "physical")
		})},
		{name: "v2 payload with a horizon", want: VerdictSchemaMismatch, cert: func(t testing.TB, f *fixture) []byte {
			_, payload, err := Sign(f.op, testPayloadV3(t, "req-0042", testIssued))
			if err != nil {
				t.Fatal(err)
			}
			return signedPayload(t, f.op, bytes.Replace(payload, []byte(SchemaV3), []byte(SchemaV2), 1))
		}},
	}
}

// TestSign_WritesV3OnlyWithAHorizon: a payload with a horizon is signed
// v3, with the excludes that do not name the copies it dates; one without
// stays v2 (or v1) with no horizon member.
func TestSign_WritesV3OnlyWithAHorizon(t *testing.T) {
	f := newFixture(t)
	_, v2, err := Sign(f.op, testPayloadV2(t, "req-0042", testIssued, testPhysical(testIssued)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(v2, []byte(`"horizon"`)) {
		t.Errorf("v2 payload %s has a horizon member", v2)
	}
	_, v3, err := Sign(f.op, testPayloadV3(t, "req-0042", testIssued))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(v3, []byte(`"schema":"`+SchemaV3+`"`)) || !bytes.Contains(v3, []byte(`"horizon":[{"store":"postgres","copy":"pg_wal"`)) {
		t.Errorf("with a horizon: %s; want v3 and the horizon", v3)
	}
	if bytes.Contains(v3, []byte("write-ahead log")) {
		t.Errorf("v3 payload %s still excludes the WAL its horizon dates", v3)
	}
}

// TestSign_RefusesHorizonsVerifiersReject: Sign checks what Verify calls
// malformed or a schema mismatch in a horizon.
func TestSign_RefusesHorizonsVerifiersReject(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		edit func(p *Payload)
	}{
		{"v2 with a horizon", func(p *Payload) { p.Schema = SchemaV2 }},
		{"v3 without one", func(p *Payload) { p.Horizon = nil; p.Schema = SchemaV3 }},
		{"v3 with a layer without a physical section", func(p *Payload) { p.Layers[1].Physical = nil }},
		{"dated without a date", func(p *Payload) { p.Horizon[1].Until = "" }},
		{"unknown with a date", func(p *Payload) { p.Horizon[2].Until = HorizonAt(testIssued) }},
		{"provider purge of postgres", func(p *Payload) { p.Horizon[4].Store = StorePostgres }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPayloadV3(t, "req-0042", testIssued)
			tc.edit(&p)
			if _, _, err := Sign(f.op, p); err == nil {
				t.Fatal("Sign accepted the payload")
			}
		})
	}
}
