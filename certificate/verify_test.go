package certificate

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// verifyCase is one certificate and the verdict both verifiers must give.
type verifyCase struct {
	name   string
	cert   func(t testing.TB, f *fixture) []byte
	keys   func(f *fixture) KeySet // nil: f.keys
	now    time.Time               // zero: testNow
	goOnly bool                    // the key set cannot be written as a file both verifiers load
	// noVector keeps the case out of testdata/vectors (too large to
	// commit); TestNodeVerifier_StopsReadingAtTheLimit covers it in Node.
	noVector bool
	want     Verdict
	// physical is the physical line a valid v2 certificate gets
	// (PhysicalSummary); "" for every other case.
	physical string
	// horizon is the horizon line a valid v3 certificate gets
	// (HorizonSummary); "" for every other case.
	horizon string
}

// operatorCert is the operator's valid certificate, edited by edit.
func operatorCert(edit func(e *Envelope)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		e := issue(t, f.op, testPayload(t, "req-0042", testIssued), nil)
		if edit != nil {
			edit(e)
		}
		return marshal(t, e)
	}
}

// payloadEdit signs, with the operator key, testPayload edited as JSON.
func payloadEdit(edit func(m map[string]any)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		m := payloadMap(t, f)
		edit(m)
		return signedPayload(t, f.op, mustJSON(t, m))
	}
}

// envelopeEdit edits the operator's valid certificate as JSON.
func envelopeEdit(edit func(m map[string]any)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		return editJSON(t, operatorCert(nil)(t, f), edit)
	}
}

func verifyCases() []verifyCase {
	afterRotation := testRotation.AddDate(0, 0, 1)
	return append([]verifyCase{
		{name: "valid", cert: operatorCert(nil), want: VerdictValid},

		// Tampering with what was signed.
		{name: "payload edited after signing", want: VerdictPayloadTampered, cert: operatorCert(func(e *Envelope) {
			e.Payload = bytes.Replace(e.Payload, []byte(`"requested":2`), []byte(`"requested":9`), 1)
		})},
		{name: "payload and its hash edited after signing", want: VerdictBadSignature, cert: operatorCert(func(e *Envelope) {
			e.Payload = bytes.Replace(e.Payload, []byte(`"requested":2`), []byte(`"requested":9`), 1)
			e.PayloadSHA256 = hexOf(string(e.Payload))
		})},
		{name: "one signature byte flipped", want: VerdictBadSignature, cert: operatorCert(func(e *Envelope) {
			e.Signature.Sig[10] ^= 0x01
		})},

		// Keys.
		{name: "self-consistent certificate made with an attacker's key", want: VerdictUnknownKey,
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.attacker, testPayload(t, "req-0042", testIssued), nil))
			}},
		{name: "attacker's signature with the operator's key pasted in", want: VerdictBadSignature,
			cert: func(t testing.TB, f *fixture) []byte {
				e := issue(t, f.attacker, testPayload(t, "req-0042", testIssued), nil)
				e.Signature.KeyID, e.Signature.PublicKey = f.op.KeyID(), f.op.Public()
				return marshal(t, e)
			}},
		{name: "attacker's key under the operator's key id", want: VerdictKeyIDMismatch,
			cert: func(t testing.TB, f *fixture) []byte {
				e := issue(t, f.attacker, testPayload(t, "req-0042", testIssued), nil)
				e.Signature.KeyID = f.op.KeyID()
				return marshal(t, e)
			}},
		{name: "embedded key differs from the trusted key of the same id", want: VerdictKeyMismatch, goOnly: true,
			cert: operatorCert(nil),
			keys: func(f *fixture) KeySet {
				// NewKeySet refuses this set; only a set built in code can hold it.
				return KeySet{origin: testOrigin, keys: []TrustedKey{{ID: f.op.KeyID(), PublicKey: f.attacker.Public(), NotBefore: testIssued.AddDate(-1, 0, 0)}}}
			}},
		{name: "issued by the old key after its not_after", want: VerdictUnknownKey, now: afterRotation.AddDate(0, 1, 0),
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.op, testPayload(t, "req-0042", afterRotation), nil))
			}},
		{name: "issued by the new key before its not_before", want: VerdictUnknownKey,
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.next, testPayload(t, "req-0042", testIssued), nil))
			}},
		{name: "old key's certificate stays valid after rotation", want: VerdictValid, now: afterRotation.AddDate(1, 0, 0),
			cert: operatorCert(nil)},
		{name: "new key's certificate after rotation", want: VerdictValid, now: afterRotation.AddDate(0, 1, 0),
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.next, testPayload(t, "req-0042", afterRotation), nil))
			}},

		// Payload schema.
		{name: "v1 envelope with a v2 payload", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			m["schema"] = "lethe.certificate/v2"
		})},
		{name: "v2 payload carrying its own fields", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			m["schema"] = "lethe.certificate/v2"
			m["retention_days"] = 30
		})},
		{name: "v1 payload with an extra field", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			m["retention_days"] = 30
		})},
		{name: "v1 payload with an extra nested field", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			m["subject"].(map[string]any)["email"] = "alice@example.com"
		})},
		{name: "v1 payload missing a field", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			delete(m, "claim")
		})},
		{name: "payload member spelled in another case", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) {
			m["Request_ID"] = m["request_id"]
			delete(m, "request_id")
		})},
		{name: "payload member of the wrong type", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["deleted_ids"].(map[string]any)["count"] = "3"
		})},
		{name: "payload list is null", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["scope"] = nil
		})},
		{name: "payload time is not RFC 3339", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["valid_until"] = "next year"
		})},
		{name: "payload is not an object", want: VerdictMalformed, cert: func(t testing.TB, f *fixture) []byte {
			return marshal(t, signBytes(f.op, []byte(`["lethe.certificate/v1"]`)))
		}},

		// Envelope schema and encoding.
		{name: "unknown field in the envelope", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["comment"] = "trust me"
		})},
		{name: "unknown field in an envelope without a log", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			delete(m, "log")
			m["comment"] = "trust me"
		})},
		{name: "unknown field in the signature", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["signature"].(map[string]any)["cert_chain"] = []string{}
		})},
		{name: "envelope version 2", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["lethe_certificate"] = 2
		})},
		{name: "envelope without a signature", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			delete(m, "signature")
		})},
		{name: "signature algorithm other than ed25519", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["signature"].(map[string]any)["alg"] = "rsa"
		})},
		{name: "10 MB input", want: VerdictOversized, noVector: true, cert: func(t testing.TB, f *fixture) []byte {
			return append(operatorCert(nil)(t, f), bytes.Repeat([]byte(" "), 10<<20)...)
		}},
		{name: "not JSON", want: VerdictMalformed, cert: func(testing.TB, *fixture) []byte { return []byte("-----BEGIN CERTIFICATE-----") }},
		{name: "JSON array", want: VerdictMalformed, cert: func(testing.TB, *fixture) []byte { return []byte(`[1]`) }},
		{name: "data after the envelope", want: VerdictMalformed, cert: func(t testing.TB, f *fixture) []byte {
			return append(operatorCert(nil)(t, f), `{}`...)
		}},
		{name: "payload not base64", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) {
			m["payload"] = "not base64!"
		})},
		{name: "payload base64 not canonical", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) {
			m["payload"] = "QR==" // decodes like QQ==, with stray bits set
		})},
		{name: "signature one byte short", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) {
			m["signature"].(map[string]any)["sig"] = base64.StdEncoding.EncodeToString(make([]byte, 63))
		})},
		{name: "payload_sha256 in upper case", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) {
			m["payload_sha256"] = strings.ToUpper(m["payload_sha256"].(string))
		})},
		{name: "version as a string", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["lethe_certificate"] = "1"
		})},
		{name: "log index negative", want: VerdictMalformed, cert: operatorCert(func(e *Envelope) {
			e.Log.Index = -1
		})},

		// Time.
		{name: "expired", want: VerdictExpired, now: testIssued.AddDate(10, 0, 0).Add(time.Second), cert: operatorCert(nil)},
		{name: "last second of validity", want: VerdictValid, now: testIssued.AddDate(10, 0, 0), cert: operatorCert(nil)},

		// Log.
		{name: "log section missing", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) { e.Log = nil })},
		{name: "log proof tampered", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) { e.Log.Proof[0][0] ^= 0x80 })},
		{name: "log proof one hash short", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) { e.Log.Proof = e.Log.Proof[1:] })},
		{name: "log index of another leaf", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) { e.Log.Index = 1 })},
		{name: "log index beyond the checkpoint", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) { e.Log.Index = 1 << 40 })},
		{name: "log leaf of another certificate", want: VerdictNotInLog, cert: func(t testing.TB, f *fixture) []byte {
			e := issue(t, f.op, testPayload(t, "req-0042", testIssued), nil)
			other := issue(t, f.op, testPayload(t, "req-0043", testIssued), nil)
			e.Log = other.Log
			return marshal(t, e)
		}},
		{name: "log leaf not canonical", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			e.Log.Leaf = append([]byte(" "), e.Log.Leaf...)
		})},
		{name: "checkpoint signed by an untrusted key", want: VerdictNotInLog, cert: func(t testing.TB, f *fixture) []byte {
			return marshal(t, issue(t, f.op, testPayload(t, "req-0042", testIssued), f.attacker))
		}},
		{name: "checkpoint signed by a key retired before issuance", want: VerdictNotInLog, now: testRotation.AddDate(0, 2, 0),
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.next, testPayload(t, "req-0042", testRotation.AddDate(0, 1, 0)), f.op))
			}},
		{name: "checkpoint signed by the key that succeeded the issuer", want: VerdictValid, now: testRotation.AddDate(0, 1, 0),
			cert: func(t testing.TB, f *fixture) []byte {
				return marshal(t, issue(t, f.op, testPayload(t, "req-0042", testIssued), f.next))
			}},
		{name: "checkpoint text edited after signing", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			e.Log.Checkpoint = strings.Replace(e.Log.Checkpoint, "\n5\n", "\n6\n", 1)
		})},
		{name: "checkpoint signature line removed", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			e.Log.Checkpoint = e.Log.Checkpoint[:strings.Index(e.Log.Checkpoint, "\n\n")+2]
		})},
		{name: "checkpoint with a bad signature line before the good one", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			e.Log.Checkpoint = withCorruptSignature(e.Log.Checkpoint, true)
		})},
	}, append(append(append(strictCases(), settledCases()...), physicalCases()...), horizonCases()...)...)
}

// withCorruptSignature adds a copy of the checkpoint's signature line with
// one signature bit flipped, before or after the original.
func withCorruptSignature(checkpoint string, before bool) string {
	split := strings.LastIndex(checkpoint, "\n\n") + 2
	line := checkpoint[split:]
	name, b64, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(line, "— "), "\n"), " ")
	raw, _ := base64.StdEncoding.DecodeString(b64)
	raw[10] ^= 1
	bad := "— " + name + " " + base64.StdEncoding.EncodeToString(raw) + "\n"
	if before {
		return checkpoint[:split] + bad + line
	}
	return checkpoint + bad
}

func TestVerify_Verdicts(t *testing.T) {
	f := newFixture(t)
	for _, tc := range verifyCases() {
		t.Run(tc.name, func(t *testing.T) {
			keys, now := f.keys, testNow
			if tc.keys != nil {
				keys = tc.keys(f)
			}
			if !tc.now.IsZero() {
				now = tc.now
			}
			got := Verify(tc.cert(t, f), keys, now)
			if got.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Reason, tc.want)
			}
			if got.Reason == "" {
				t.Error("no reason given")
			}
			if got.Physical != tc.physical {
				t.Errorf("physical %q, want %q", got.Physical, tc.physical)
			}
			if got.Horizon != tc.horizon {
				t.Errorf("horizon %q, want %q", got.Horizon, tc.horizon)
			}
			if (got.Verdict == VerdictValid || got.Verdict == VerdictExpired) && got.Payload == nil {
				t.Error("payload not returned")
			}
		})
	}
}

func TestVerify_ReturnsThePayloadSigned(t *testing.T) {
	f := newFixture(t)
	p := testPayload(t, "req-0042", testIssued.Add(1500*time.Millisecond))
	r := Verify(marshal(t, issue(t, f.op, p, nil)), f.keys, testNow)
	if !r.Valid() {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	if r.Payload.RequestID != "req-0042" || r.Payload.Schema != SchemaV1 || !r.Payload.IssuedAt.Equal(testIssued.Add(time.Second)) {
		t.Errorf("payload %+v: want request req-0042, schema v1, issued_at truncated to %s", r.Payload, testIssued.Add(time.Second))
	}
	if len(r.Payload.Claim.Excludes) != len(DefaultExcludes()) {
		t.Errorf("claim.excludes %q, want the defaults", r.Payload.Claim.Excludes)
	}
}

func TestParse_RoundTripsMarshal(t *testing.T) {
	f := newFixture(t)
	data := marshal(t, issue(t, f.op, testPayload(t, "req-0042", testIssued), nil))
	e, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if again := marshal(t, e); !bytes.Equal(again, data) {
		t.Errorf("Marshal(Parse(x)) differs from x:\n%s\n%s", again, data)
	}
	if _, err := Parse([]byte(`{"lethe_certificate":2}`)); err == nil || !strings.Contains(err.Error(), string(VerdictSchemaMismatch)) {
		t.Errorf("Parse(v2) = %v, want a schema_mismatch error", err)
	}
}

func TestSign_RefusesPayloadsVerifiersReject(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		edit func(p *Payload)
	}{
		{"other schema", func(p *Payload) { p.Schema = "lethe.certificate/v2" }},
		{"request id with a quote", func(p *Payload) { p.RequestID = `req"1` }},
		{"no request id", func(p *Payload) { p.RequestID = "" }},
		{"no issued_at", func(p *Payload) { p.IssuedAt = time.Time{} }},
		{"valid_until before issued_at", func(p *Payload) { p.ValidUntil = p.IssuedAt.Add(-time.Hour) }},
		{"hmac not hex", func(p *Payload) { p.Subject.HMAC = "alice" }},
		{"rules digest upper case", func(p *Payload) { p.RulesSHA256 = strings.ToUpper(p.RulesSHA256) }},
		{"negative count", func(p *Payload) { p.DeletedIDs.Count = -1 }},
		{"no tool", func(p *Payload) { p.Tool = "" }},
		{"no statement", func(p *Payload) { p.Claim.Statement = "" }},
		{"scope without table", func(p *Payload) { p.Scope = []Scope{{Store: "postgres"}} }},
		{"layer outside the scope", func(p *Payload) { p.Layers[0].Table = "public.other" }},
		{"deleted_ids.count not the layers' deletions", func(p *Payload) { p.DeletedIDs.Count++ }},
		{"verified absent with residual records", func(p *Payload) { p.Layers[0].Residual = 1 }},
		{"negative residual", func(p *Payload) { p.Layers[0].Residual, p.Layers[0].VerifiedAbsent = -1, false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPayload(t, "req-0042", testIssued)
			tc.edit(&p)
			if _, _, err := Sign(f.op, p); err == nil {
				t.Fatal("Sign accepted the payload")
			}
		})
	}
}

func TestSign_WritesEmptyListsNotNull(t *testing.T) {
	f := newFixture(t)
	p := testPayload(t, "req-0042", testIssued)
	p.Scope, p.Layers, p.Claim.Covers = nil, nil, nil
	var err error
	if p.DeletedIDs, err = IDsRoot(nil); err != nil {
		t.Fatal(err)
	}
	e, payload, err := Sign(f.op, p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(payload, []byte("null")) {
		t.Errorf("payload has null: %s", payload)
	}
	logEnvelope(t, e, nil, f.op)
	// It reads, but an empty scope checked nothing: it proves no erasure.
	if r := Verify(marshal(t, e), f.keys, testNow); r.Verdict != VerdictIncomplete {
		t.Errorf("%s: %s; want incomplete", r.Verdict, r.Reason)
	}
}
