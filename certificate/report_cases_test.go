package certificate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// The cases of signed reports (docs/certificate.md, "Reports") with the
// verdict every verifier must give: TestVerifyReport_Verdicts runs them in
// Go, and they are written to testdata/vectors for node/verify.mjs and
// `lethe-proxy verify`. Many are bodies that lenient JSON parsers read one
// way and strict ones another (repeated members, members in another case,
// data after the value, numbers and times of other spellings): a verifier
// must refuse each, so that a report reads the same everywhere.

type reportCase struct {
	name   string
	report func(t testing.TB, f *fixture) []byte
	now    time.Time // zero: reportNow
	// requireLog verifies as --require-log does: no log section is not_in_log.
	requireLog bool
	want       Verdict
}

// policy is the ReportPolicy the case is verified under.
func (tc reportCase) policy() ReportPolicy {
	p := ReportPolicy{Now: tc.now, RequireLog: tc.requireLog}
	if p.Now.IsZero() {
		p.Now = reportNow
	}
	return p
}

// testSweepReport is a sweep of two tables at testIssued.
func testSweepReport() Report {
	cutoff := testIssued.AddDate(0, 0, -90)
	return Report{Kind: EventRetentionSwept, RunID: "sweep-20260601T120000Z-0f1e2d3c", At: testIssued, Layers: []ReportLayer{
		{Store: "postgres", Table: "public.chat_memory", Found: 2411, Done: 2411, Cutoff: &cutoff,
			Method: `records whose retain_by (created_at) is before the cutoff were deleted; verified by re-count: SELECT count(*) FROM "public"."chat_memory" WHERE "created_at" < $1`},
		{Store: "pinecone", Table: "docs/default", Found: 3, Done: 2, Residual: 1, Cutoff: &cutoff,
			Method: "records whose metadata created_at is before the cutoff were deleted; one was still found by the re-query"},
	}}
}

// testReconcileReport is a reconcile's adoption at testIssued: no cutoffs.
func testReconcileReport() Report {
	return Report{Kind: EventReconcileAdopted, RunID: "reconcile-20260601T120000Z", At: testIssued, Layers: []ReportLayer{
		{Store: "postgres", Table: "public.docs", Found: 7, Done: 7, Method: `rows of "public"."docs" whose id the ledger did not hold were tagged from their stored subject column`},
		{Store: "pinecone", Table: "docs/*", Found: 0, Done: 0, Method: "list of every namespace, fetch of unknown ids"},
	}}
}

// logReport logs sr's event, under kind and runID, between other events
// in a fresh log, the checkpoint signed by logKey.
func logReport(t testing.TB, sr *SignedReport, kind, runID string, logKey *Signer) {
	t.Helper()
	var l testLog
	l.appendEvent(t, Event{Event: EventKeyRotated, KeyID: logKey.KeyID()})
	l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0001"})
	i := l.appendEvent(t, Event{Event: kind, RequestID: runID, ReportSHA256: sr.PayloadSHA256})
	l.appendEvent(t, Event{Event: EventCompleted, RequestID: "req-0001", CertificateSHA256: hexOf("a certificate")})
	_, cp := l.checkpoint(t, logKey)
	sr.AttachLog(l.leaves[i], i, l.prove(t, i), cp)
}

// signedReport signs r with s and logs it, the checkpoint signed by logKey
// (s when nil).
func signedReport(t testing.TB, s *Signer, r Report, logKey *Signer) *SignedReport {
	t.Helper()
	sr, err := SignReport(s, r)
	if err != nil {
		t.Fatal(err)
	}
	if logKey == nil {
		logKey = s
	}
	logReport(t, sr, r.Kind, r.RunID, logKey)
	return sr
}

func marshalReport(t testing.TB, sr *SignedReport) []byte {
	t.Helper()
	b, err := sr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// operatorSweep is the operator's logged sweep report, edited by edit.
func operatorSweep(edit func(sr *SignedReport)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		sr := signedReport(t, f.op, testSweepReport(), nil)
		if edit != nil {
			edit(sr)
		}
		return marshalReport(t, sr)
	}
}

// sweepText edits the text of the operator's logged sweep report; the text
// must hold old.
func sweepText(old, new string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		return replaceOnce(t, operatorSweep(nil)(t, f), old, new)
	}
}

func replaceOnce(t testing.TB, data []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("no %q in %s", old, data)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

// sweepPayload signs, with the operator key, the sweep's payload bytes
// with old replaced by new, and logs them as the sweep's event.
func sweepPayload(old, new string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		sr, err := SignReport(f.op, testSweepReport())
		if err != nil {
			t.Fatal(err)
		}
		return signedReportBytes(t, f.op, replaceOnce(t, sr.Payload, old, new))
	}
}

// signedReportBytes signs payload bytes SignReport would not write, and
// logs them as the test sweep's event.
func signedReportBytes(t testing.TB, s *Signer, payload []byte) []byte {
	t.Helper()
	return signedReportBytesOf(t, s, testSweepReport(), payload)
}

// signedReportBytesOf signs payload bytes and logs them as r's event.
func signedReportBytesOf(t testing.TB, s *Signer, r Report, payload []byte) []byte {
	t.Helper()
	e := signBytes(s, payload)
	sr := &SignedReport{Version: ReportVersion, Payload: e.Payload, PayloadSHA256: e.PayloadSHA256, Signature: e.Signature}
	logReport(t, sr, r.Kind, r.RunID, s)
	return marshalReport(t, sr)
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func reportCases() []reportCase {
	afterRotation := testRotation.AddDate(0, 0, 1)
	sweepAt := func(at time.Time) Report { r := testSweepReport(); r.At = at; return r }
	return append([]reportCase{
		{name: "valid sweep", want: VerdictValid, report: operatorSweep(nil)},
		{name: "valid reconcile", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, testReconcileReport(), nil))
		}},
		{name: "valid sweep of no layers", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			r := testSweepReport()
			r.Layers = nil
			return marshalReport(t, signedReport(t, f.op, r, nil))
		}},
		{name: "valid sweep not logged", want: VerdictValid, report: operatorSweep(func(sr *SignedReport) { sr.Log = nil })},
		{name: "valid sweep with log null", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.op, testSweepReport(), nil)
			sr.Log = nil
			return replaceOnce(t, marshalReport(t, sr), "\n}", ",\n  \"log\": null\n}")
		}},
		{name: "valid sweep signed by the new key after rotation", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.next, sweepAt(afterRotation), nil))
		}},
		{name: "checkpoint signed by the key that succeeded the signer", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, testSweepReport(), f.next))
		}},
		// Neither verifier normalises Unicode: the signature covers bytes.
		{name: "table name not in NFC", want: VerdictValid, report: sweepPayload(`"public.chat_memory"`, "\"public.cafe\u0301\"")},
		{name: "member name spelled with an escape", want: VerdictValid, report: sweepPayload(`"kind"`, `"k\u0069nd"`)},

		{name: "payload indented", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testSweepReport())
			if err != nil {
				t.Fatal(err)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, sr.Payload, "", "\t"); err != nil {
				t.Fatal(err)
			}
			return signedReportBytes(t, f.op, indented.Bytes())
		}},
		{name: "envelope member name spelled with an escape", want: VerdictValid, report: sweepText(`"lethe_report"`, `"lethe\u005freport"`)},
		{name: "at with an offset", want: VerdictValid, report: sweepPayload(`"at":"2026-06-01T12:00:00Z"`, `"at":"2026-06-01T14:00:00+02:00"`)},
		{name: "count written -0", want: VerdictValid, report: sweepPayload(`"residual":0`, `"residual":-0`)},
		// Windows are compared to the nanosecond, as for certificates.
		{name: "at the last instant of the key's window", want: VerdictValid, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, sweepAt(testRotation), nil))
		}},
		{name: "at a nanosecond after the key's window", want: VerdictUnknownKey, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, sweepAt(testRotation.Add(time.Nanosecond)), nil))
		}},

		// Tampering with what was signed.
		{name: "body edited after signing", want: VerdictPayloadTampered, report: operatorSweep(func(sr *SignedReport) {
			sr.Payload = bytes.Replace(sr.Payload, []byte(`"done":2411`), []byte(`"done":2412`), 1)
		})},
		{name: "body and its hash edited after signing", want: VerdictBadSignature, report: operatorSweep(func(sr *SignedReport) {
			sr.Payload = bytes.Replace(sr.Payload, []byte(`"residual":1`), []byte(`"residual":0`), 1)
			sr.PayloadSHA256 = hexOf(string(sr.Payload))
		})},
		{name: "signature over other bytes", want: VerdictBadSignature, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.op, testSweepReport(), nil)
			other, err := SignReport(f.op, testReconcileReport())
			if err != nil {
				t.Fatal(err)
			}
			sr.Signature.Sig = other.Signature.Sig
			return marshalReport(t, sr)
		}},

		// Keys.
		{name: "signed with an attacker's key", want: VerdictUnknownKey, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.attacker, testSweepReport(), nil))
		}},
		{name: "attacker's key under the operator's key id", want: VerdictKeyIDMismatch, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.attacker, testSweepReport(), nil)
			sr.Signature.KeyID = f.op.KeyID()
			return marshalReport(t, sr)
		}},
		{name: "attacker's signature with the operator's key pasted in", want: VerdictBadSignature, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.attacker, testSweepReport(), nil)
			sr.Signature.KeyID, sr.Signature.PublicKey = f.op.KeyID(), f.op.Public()
			return marshalReport(t, sr)
		}},
		{name: "signed by the old key after its not_after", want: VerdictUnknownKey, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, sweepAt(afterRotation), nil))
		}},
		{name: "signed by the new key before its not_before", want: VerdictUnknownKey, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.next, testSweepReport(), nil))
		}},

		// Versions, kinds and members.
		{name: "lethe_report 2", want: VerdictSchemaMismatch, report: sweepText(`"lethe_report": 1`, `"lethe_report": 2`)},
		{name: "lethe_report written 1.0", want: VerdictSchemaMismatch, report: sweepText(`"lethe_report": 1`, `"lethe_report": 1.0`)},
		{name: "signature algorithm other than ed25519", want: VerdictSchemaMismatch, report: sweepText(`"alg": "ed25519"`, `"alg": "ed448"`)},
		{name: "unknown envelope member", want: VerdictSchemaMismatch, report: sweepText(`"lethe_report": 1`, `"lethe_report": 1, "comment": "x"`)},
		{name: "envelope member name in upper case", want: VerdictSchemaMismatch, report: sweepText(`"payload_sha256"`, `"PAYLOAD_SHA256"`)},
		{name: "envelope member missing", want: VerdictSchemaMismatch, report: func(t testing.TB, f *fixture) []byte {
			return editJSON(t, operatorSweep(nil)(t, f), func(m map[string]any) { delete(m, "payload_sha256") })
		}},
		{name: "unknown kind", want: VerdictSchemaMismatch, report: sweepPayload(`"kind":"retention.swept"`, `"kind":"retention.planned"`)},
		{name: "kind of a forget event", want: VerdictSchemaMismatch, report: sweepPayload(`"kind":"retention.swept"`, `"kind":"forget.completed"`)},
		{name: "payload of a certificate's schema", want: VerdictSchemaMismatch, report: sweepPayload(`"schema":"lethe.report/v1"`, `"schema":"lethe.certificate/v1"`)},
		{name: "payload member missing", want: VerdictSchemaMismatch, report: sweepPayload(`"done":2411,`, ``)},
		{name: "payload at missing", want: VerdictSchemaMismatch, report: sweepPayload(`"at":"2026-06-01T12:00:00Z",`, ``)},
		{name: "unknown payload member", want: VerdictSchemaMismatch, report: sweepPayload(`"found":2411`, `"found":2411,"adopted":0`)},
		{name: "payload member name in upper case", want: VerdictSchemaMismatch, report: sweepPayload(`"residual":1`, `"Residual":1`)},

		// JSON outside the subset, in the envelope.
		{name: "byte order mark before the report", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			return append([]byte("\ufeff"), operatorSweep(nil)(t, f)...)
		}},
		{name: "data after the report", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			return append(operatorSweep(nil)(t, f), "{}\n"...)
		}},
		{name: "envelope member repeated", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			forged, err := SignReport(f.attacker, testSweepReport())
			if err != nil {
				t.Fatal(err)
			}
			return sweepText(`"lethe_report": 1,`, `"lethe_report": 1, "payload_sha256": "`+forged.PayloadSHA256+`",`)(t, f)
		}},
		{name: "log index written 2e0", want: VerdictMalformed, report: sweepText(`"index": 2`, `"index": 2e0`)},
		{name: "log index negative", want: VerdictMalformed, report: sweepText(`"index": 2`, `"index": -2`)},
		{name: "signature not canonical base64", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.op, testSweepReport(), nil)
			sig := base64.StdEncoding.EncodeToString(sr.Signature.Sig) // 64 bytes: 86 digits and "=="
			// The 86th digit carries 4 bits that must be zero; setting one
			// decodes to the same bytes in a lenient decoder.
			last := strings.IndexByte(base64Digits, sig[85])
			if last%16 != 0 {
				t.Fatalf("signature %s has stray bits already", sig)
			}
			return replaceOnce(t, marshalReport(t, sr), sig, sig[:85]+string(base64Digits[last+1])+"==")
		}},
		{name: "payload_sha256 in upper case", want: VerdictMalformed, report: operatorSweep(func(sr *SignedReport) {
			sr.PayloadSHA256 = strings.ToUpper(sr.PayloadSHA256)
		})},
		{name: "signature null", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			return editJSON(t, operatorSweep(nil)(t, f), func(m map[string]any) { m["signature"] = nil })
		}},

		{name: "lethe_report written as a string", want: VerdictSchemaMismatch, report: sweepText(`"lethe_report": 1`, `"lethe_report": "1"`)},
		{name: "lethe_report beside lethe_certificate", want: VerdictSchemaMismatch, report: sweepText(`"lethe_report": 1`, `"lethe_report": 1, "lethe_certificate": 1`)},
		{name: "payload member named __proto__", want: VerdictSchemaMismatch, report: sweepPayload(`"found":3`, `"found":3,"__proto__":{"found":4}`)},

		// JSON outside the subset, in the signed payload.
		{name: "payload member repeated", want: VerdictMalformed, report: sweepPayload(`"kind":"retention.swept"`, `"kind":"retention.swept","kind":"reconcile.adopted"`)},
		{name: "data after the payload", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testSweepReport())
			if err != nil {
				t.Fatal(err)
			}
			return signedReportBytes(t, f.op, append(sr.Payload, `{"kind":"reconcile.adopted"}`...))
		}},
		{name: "byte order mark before the payload", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testSweepReport())
			if err != nil {
				t.Fatal(err)
			}
			return signedReportBytes(t, f.op, append([]byte("\ufeff"), sr.Payload...))
		}},
		{name: "payload not UTF-8", want: VerdictMalformed, report: sweepPayload(`"public.chat_memory"`, "\"public.chat\xffmemory\"")},
		{name: "lone surrogate in a payload string", want: VerdictMalformed, report: sweepPayload(`"public.chat_memory"`, `"public.chat\ud800memory"`)},
		{name: "surrogate encoded in UTF-8", want: VerdictMalformed, report: sweepPayload(`"public.chat_memory"`, "\"public.chat\xed\xa0\x80memory\"")},
		{name: "layer null", want: VerdictMalformed, report: sweepPayload(`"layers":[`, `"layers":[null,`)},
		{name: "lone surrogate escape in a member name", want: VerdictMalformed, report: sweepText(`"signature"`, `"signature\ud800"`)},
		{name: "count written 2.411e3", want: VerdictMalformed, report: sweepPayload(`"found":2411`, `"found":2.411e3`)},
		{name: "count written 2411.0", want: VerdictMalformed, report: sweepPayload(`"found":2411`, `"found":2411.0`)},
		{name: "count beyond 64 bits", want: VerdictMalformed, report: sweepPayload(`"found":2411`, `"found":9223372036854775808`)},
		{name: "count written as a string", want: VerdictMalformed, report: sweepPayload(`"found":2411`, `"found":"2411"`)},
		{name: "negative count", want: VerdictMalformed, report: sweepPayload(`"residual":1`, `"residual":-1`)},
		{name: "at with a comma before the fraction", want: VerdictMalformed, report: sweepPayload(`"at":"2026-06-01T12:00:00Z"`, `"at":"2026-06-01T12:00:00,5Z"`)},
		{name: "at with ten digits of fraction", want: VerdictMalformed, report: sweepPayload(`"at":"2026-06-01T12:00:00Z"`, `"at":"2026-06-01T12:00:00.1234567891Z"`)},
		{name: "at on a date that does not exist", want: VerdictMalformed, report: sweepPayload(`"at":"2026-06-01T12:00:00Z"`, `"at":"2026-06-31T12:00:00Z"`)},
		{name: "at in lower case", want: VerdictMalformed, report: sweepPayload(`"at":"2026-06-01T12:00:00Z"`, `"at":"2026-06-01t12:00:00z"`)},
		{name: "cutoff null", want: VerdictMalformed, report: sweepPayload(`,"cutoff":"2026-03-03T12:00:00Z"}]`, `,"cutoff":null}]`)},
		{name: "re-scan whose free and holding pages are not those scanned", want: VerdictMalformed, report: physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":10,"residual":10,"method":"re-scan"}`))},
		{name: "re-scan whose pages add up", want: VerdictValid, report: physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":7,"residual":3,"method":"re-scan"}`))},
		{name: "run_id with a space", want: VerdictMalformed, report: sweepPayload(`"run_id":"sweep-20260601T120000Z-0f1e2d3c"`, `"run_id":"sweep 20260601T120000Z"`)},
		{name: "layers not an array", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			r := testSweepReport()
			r.Layers = nil
			sr, err := SignReport(f.op, r)
			if err != nil {
				t.Fatal(err)
			}
			return signedReportBytes(t, f.op, replaceOnce(t, sr.Payload, `"layers":[]`, `"layers":{}`))
		}},

		// The log.
		{name: "leaf of another event", want: VerdictNotInLog, report: operatorSweep(func(sr *SignedReport) {
			sr.Log.Leaf = []byte(`{"v":1,"event":"forget.requested","request_id":"req-0001"}`)
		})},
		{name: "leaf of the other report kind", want: VerdictNotInLog, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testSweepReport())
			if err != nil {
				t.Fatal(err)
			}
			logReport(t, sr, EventReconcileAdopted, testSweepReport().RunID, f.op)
			return marshalReport(t, sr)
		}},
		{name: "leaf moved to another index", want: VerdictNotInLog, report: operatorSweep(func(sr *SignedReport) { sr.Log.Index = 1 })},
		{name: "log index beyond the checkpoint", want: VerdictNotInLog, report: operatorSweep(func(sr *SignedReport) { sr.Log.Index = 1 << 40 })},
		{name: "checkpoint signed by an untrusted key", want: VerdictNotInLog, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.op, testSweepReport(), f.attacker))
		}},
		{name: "checkpoint signed by a key retired before the report", want: VerdictNotInLog, report: func(t testing.TB, f *fixture) []byte {
			return marshalReport(t, signedReport(t, f.next, sweepAt(afterRotation), f.op))
		}},
		{name: "checkpoint text edited after signing", want: VerdictNotInLog, report: operatorSweep(func(sr *SignedReport) {
			sr.Log.Checkpoint = strings.Replace(sr.Log.Checkpoint, "\n4\n", "\n5\n", 1)
		})},
		{name: "checkpoint of another log origin", want: VerdictNotInLog, report: func(t testing.TB, f *fixture) []byte {
			sr := signedReport(t, f.op, testSweepReport(), nil)
			sr.Log.Checkpoint = resignCheckpoint(t, sr.Log.Checkpoint, "log.lethe.example/staging", f.op)
			return marshalReport(t, sr)
		}},
	}, settledReportCases()...)
}

// TestVerifyReport_Verdicts runs every report case through VerifyReport:
// a valid report verifies, and every other is refused with its verdict.
func TestVerifyReport_Verdicts(t *testing.T) {
	f := newFixture(t)
	for _, tc := range reportCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VerifyReportWith(tc.report(t, f), f.keys, tc.policy())
			got := VerdictValid
			if err != nil {
				got = "refused"
				var re *ReportError
				if errors.As(err, &re) {
					got = re.Verdict
				}
			}
			if got != tc.want {
				t.Fatalf("verdict %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}
