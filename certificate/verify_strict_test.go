package certificate

import (
	"encoding/base64"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

// payloadBytesEdit signs, with the operator key, the test payload's bytes
// with old replaced by new: edits that a JSON round trip cannot make
// (repeated members, number spellings, impossible dates).
func payloadBytesEdit(edits ...string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		_, payload, err := Sign(f.op, testPayload(t, "req-0042", testIssued))
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.NewReplacer(edits...).Replace(string(payload))
		if edited == string(payload) {
			t.Fatalf("%q changed nothing", edits)
		}
		return signedPayload(t, f.op, []byte(edited))
	}
}

// envelopeBytesEdit edits the operator's valid certificate as text.
func envelopeBytesEdit(edit func(t testing.TB, f *fixture, cert string) string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		cert := string(operatorCert(nil)(t, f))
		edited := edit(t, f, cert)
		if edited == cert {
			t.Fatal("the edit changed nothing")
		}
		return []byte(edited)
	}
}

// layerEdit signs the test payload with its first layer edited.
func layerEdit(edit func(l map[string]any)) func(t testing.TB, f *fixture) []byte {
	return payloadEdit(func(m map[string]any) { edit(m["layers"].([]any)[0].(map[string]any)) })
}

// ed25519Order is L, the order of the Ed25519 base point (RFC 8032).
var ed25519Order, _ = new(big.Int).SetString("7237005577332262213973186563042994961822952168084434263375045466289412353", 10)

// strictCases are the certificates an independent verifier, written from
// docs/certificate.md alone, read differently from this one or from the
// Node verifier (issue 10): each pins what the spec now says.
func strictCases() []verifyCase {
	validUntil := testIssued.AddDate(10, 0, 0)
	return []verifyCase{
		// Repeated member names: a first-wins reader and a last-wins reader
		// would see different certificates, so neither may be chosen.
		{name: "forged payload member before the real one", want: VerdictMalformed, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			forged := base64.StdEncoding.EncodeToString([]byte(`{"schema":"lethe.certificate/v1","request_id":"forged"}`))
			return strings.Replace(cert, "{\n", "{\n  \"payload\": \""+forged+"\",\n", 1)
		})},
		{name: "signature member repeated", want: VerdictMalformed, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return strings.Replace(cert, "{\n", `{"signature":{"alg":"ed25519","key_id":"x","public_key":"","sig":""},`, 1)
		})},
		{name: "member repeated inside the payload", want: VerdictMalformed,
			cert: payloadBytesEdit(`"request_id":"req-0042"`, `"request_id":"req-0001","request_id":"req-0042"`)},
		{name: "member repeated under another spelling", want: VerdictMalformed,
			cert: payloadBytesEdit(`"tool":"lethe-proxy 0.1.0"`, `"tool":"lethe-proxy 0.1.0","t\u006fol":"x"`)},
		{name: "payload not UTF-8", want: VerdictMalformed,
			cert: payloadBytesEdit(`"tool":"lethe-proxy 0.1.0"`, "\"tool\":\"lethe-proxy \xff\"")},
		{name: "lone surrogate escape", want: VerdictMalformed,
			cert: payloadBytesEdit(`"tool":"lethe-proxy 0.1.0"`, `"tool":"lethe-proxy \ud800"`)},
		{name: "lone surrogate escape in an envelope member name", want: VerdictMalformed, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return strings.Replace(cert, `"signature"`, `"signature\ud800"`, 1)
		})},
		{name: "lone surrogate escape in a payload member name", want: VerdictMalformed,
			cert: payloadBytesEdit(`"tool":"lethe-proxy 0.1.0"`, `"tool":"lethe-proxy 0.1.0","\udc00":1`)},
		{name: "byte order mark before the envelope", want: VerdictMalformed, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return "\ufeff" + cert
		})},

		// Checkpoint signatures: every line by a trusted key must verify.
		{name: "checkpoint with a bad signature line after the good one", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			e.Log.Checkpoint = withCorruptSignature(e.Log.Checkpoint, false)
		})},
		{name: "checkpoint with a bad line by a retired trusted key", want: VerdictNotInLog, now: testRotation.AddDate(0, 2, 0),
			cert: func(t testing.TB, f *fixture) []byte {
				e := issue(t, f.next, testPayload(t, "req-0042", testRotation.AddDate(0, 1, 0)), nil)
				e.Log.Checkpoint = withForeignCorruptSignature(t, e.Log.Checkpoint, f.op)
				return marshal(t, e)
			}},
		{name: "checkpoint of another log origin", want: VerdictNotInLog, cert: func(t testing.TB, f *fixture) []byte {
			e := issue(t, f.op, testPayload(t, "req-0042", testIssued), nil)
			e.Log.Checkpoint = resignCheckpoint(t, e.Log.Checkpoint, "log.lethe.example/staging", f.op)
			return marshal(t, e)
		}},

		// Numbers and times read alike everywhere.
		{name: "envelope version written 1.0", want: VerdictSchemaMismatch, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return strings.Replace(cert, `"lethe_certificate": 1,`, `"lethe_certificate": 1.0,`, 1)
		})},
		{name: "integer written 2.0", want: VerdictMalformed, cert: payloadBytesEdit(`"requested":2`, `"requested":2.0`)},
		{name: "integer written 2e0", want: VerdictMalformed, cert: payloadBytesEdit(`"requested":2`, `"requested":2e0`)},
		{name: "log index written 2.0", want: VerdictMalformed, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return strings.Replace(cert, `"index": 2,`, `"index": 2.0,`, 1)
		})},
		{name: "date that does not exist", want: VerdictMalformed,
			cert: payloadBytesEdit(`"valid_until":"2036-06-01T12:00:00Z"`, `"valid_until":"2027-02-30T00:00:00Z"`)},
		{name: "hour 24", want: VerdictMalformed,
			cert: payloadBytesEdit(`"valid_until":"2036-06-01T12:00:00Z"`, `"valid_until":"2036-06-01T24:00:00Z"`)},
		{name: "offset of 24 hours", want: VerdictMalformed,
			cert: payloadBytesEdit(`"valid_until":"2036-06-01T12:00:00Z"`, `"valid_until":"2036-06-01T12:00:00+24:00"`)},
		{name: "time with an offset", want: VerdictValid,
			cert: payloadBytesEdit(`"valid_until":"2036-06-01T12:00:00Z"`, `"valid_until":"2036-06-01T14:00:00.5+02:00"`)},
		{name: "half a millisecond after valid_until", want: VerdictExpired, now: validUntil.Add(500 * time.Microsecond), cert: operatorCert(nil)},
		{name: "one nanosecond after valid_until", want: VerdictExpired, now: validUntil.Add(time.Nanosecond), cert: operatorCert(nil)},

		// What the certificate proves.
		{name: "residual records left", want: VerdictIncomplete, cert: layerEdit(func(l map[string]any) {
			l["residual"], l["verified_absent"] = 2, false
		})},
		{name: "absence not verified", want: VerdictIncomplete, cert: layerEdit(func(l map[string]any) {
			l["verified_absent"] = false
		})},
		{name: "verified absent with residual records", want: VerdictMalformed, cert: layerEdit(func(l map[string]any) {
			l["residual"] = 1
		})},
		{name: "negative count", want: VerdictMalformed, cert: layerEdit(func(l map[string]any) {
			l["requested"] = -1
		})},
		{name: "negative residual", want: VerdictMalformed, cert: layerEdit(func(l map[string]any) {
			l["residual"] = -1
		})},
		{name: "deleted_ids.count differs from the layers' deletions", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["deleted_ids"].(map[string]any)["count"] = 4
		})},
		// Three layers of 2^63-1 deletions sum to 3*2^63-3; a count of that
		// sum modulo 2^64 (2^63-3) is not their sum: counts add exactly.
		{name: "deleted_ids.count equal to the layers' deletions only modulo 2^64", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			layers, scope := []any{}, []any{}
			for _, table := range []string{"public.a", "public.b", "public.c"} {
				l := map[string]any{}
				for k, v := range m["layers"].([]any)[0].(map[string]any) {
					l[k] = v
				}
				l["table"], l["requested"], l["deleted"] = table, int64(math.MaxInt64), int64(math.MaxInt64)
				layers, scope = append(layers, l), append(scope, map[string]any{"store": "postgres", "table": table})
			}
			m["layers"], m["scope"] = layers, scope
			m["deleted_ids"].(map[string]any)["count"] = int64(math.MaxInt64 - 2)
		})},
		// A payload's schema is read first: null is schema_mismatch, not the
		// type fault null is in any other member.
		{name: "payload schema null", want: VerdictSchemaMismatch, cert: payloadEdit(func(m map[string]any) { m["schema"] = nil })},
		{name: "more deleted than the ledger knew of", want: VerdictValid, cert: layerEdit(func(l map[string]any) {
			l["requested"] = 1 // the subject predicate found a row the ledger had not seen
		})},
		{name: "layer outside the scope", want: VerdictMalformed, cert: layerEdit(func(l map[string]any) {
			l["table"] = "public.other"
		})},
		{name: "scope entry without a layer", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["scope"] = append(m["scope"].([]any), map[string]any{"store": "postgres", "table": "public.other"})
		})},
		{name: "scope entry listed twice", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			s := m["scope"].([]any)
			m["scope"] = append(s, s[0])
		})},
		{name: "digest not lowercase hex", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["rules_sha256"] = strings.ToUpper(m["rules_sha256"].(string))
		})},
		{name: "valid_until before issued_at", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) {
			m["valid_until"] = "2026-05-01T00:00:00Z"
		})},
		{name: "verified before it was issued", want: VerdictNotYetValid, now: testIssued.Add(-time.Second), cert: operatorCert(nil)},
		{name: "verified the second it was issued", want: VerdictValid, now: testIssued, cert: operatorCert(nil)},

		// Ed25519: S must be below the group order (RFC 8032 5.1.7).
		{name: "signature with S + L", want: VerdictBadSignature, cert: operatorCert(func(e *Envelope) {
			e.Signature.Sig = withNonCanonicalS(e.Signature.Sig)
		})},
	}
}

// withNonCanonicalS returns sig with L added to its scalar S: the same
// point equation holds, but RFC 8032 requires S < L.
func withNonCanonicalS(sig []byte) []byte {
	le := func(b []byte) []byte { // little-endian <-> big-endian
		out := make([]byte, len(b))
		for i := range b {
			out[len(b)-1-i] = b[i]
		}
		return out
	}
	s := new(big.Int).SetBytes(le(sig[32:]))
	s.Add(s, ed25519Order)
	out := append([]byte(nil), sig[:32]...)
	return append(out, le(s.FillBytes(make([]byte, 32)))...)
}

// withForeignCorruptSignature appends a signature line by signer s over
// the checkpoint's text, under its origin, with one bit flipped.
func withForeignCorruptSignature(t testing.TB, checkpoint string, s *Signer) string {
	t.Helper()
	split := strings.LastIndex(checkpoint, "\n\n") + 1
	origin, _, _ := strings.Cut(checkpoint, "\n")
	other, err := signNote(s, origin, checkpoint[:split])
	if err != nil {
		t.Fatal(err)
	}
	return checkpoint + withCorruptSignature(other, false)[len(other):]
}

// resignCheckpoint signs the checkpoint's tree again under another origin.
func resignCheckpoint(t testing.TB, checkpoint, origin string, s *Signer) string {
	t.Helper()
	_, rest, _ := strings.Cut(checkpoint, "\n")
	body := rest[:strings.Index(rest, "\n\n")+1]
	signed, err := signNote(s, origin, origin+"\n"+body)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}
