package certificate

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// The cases of issue 24: certificates and reports an adversarial suite
// found that the Go verifier, the Node verifier and a verifier written from
// docs/certificate.md alone answered differently, or not at all. Each pins
// what the spec now says; all are test vectors, judged by both verifiers.

// hugeLogCert is the operator's certificate logged as leaf index of a tree
// of size leaves, stated in the checkpoint as sizeText: no such tree can
// be built, but its inclusion proofs can (hugeTreePath). corrupt flips a
// bit of the proof.
func hugeLogCert(sizeText string, size, index int64, corrupt bool) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		e, _, err := Sign(f.op, testPayload(t, "req-0042", testIssued))
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := e.CompletedLeaf()
		if err != nil {
			t.Fatal(err)
		}
		proof, root := hugeTreePath(size, index, tlog.RecordHash(leaf))
		if corrupt {
			proof[0][0] ^= 1
		}
		cp, err := signNote(f.op, testOrigin, testOrigin+"\n"+sizeText+"\n"+base64.StdEncoding.EncodeToString(root[:])+"\n")
		if err != nil {
			t.Fatal(err)
		}
		e.AttachLog(leaf, index, proof, cp)
		return marshal(t, e)
	}
}

// withRequestID signs the test payload with request_id id, logged under a
// leaf spelled by concatenation, as a verifier would build it: for ids
// outside the set the leaf is not even JSON, and the payload is refused
// before the log is read.
func withRequestID(id string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		m := payloadMap(t, f)
		m["request_id"] = id
		e := signBytes(f.op, mustJSON(t, m))
		var l testLog
		l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0001"})
		leaf := []byte(`{"v":1,"event":"forget.completed","request_id":"` + id + `","certificate_sha256":"` + e.PayloadSHA256 + `"}`)
		i := l.append(t, leaf)
		l.appendEvent(t, Event{Event: EventReverified, RequestID: "req-0001"})
		_, cp := l.checkpoint(t, f.op)
		e.AttachLog(leaf, i, l.prove(t, i), cp)
		return marshal(t, e)
	}
}

// checkpointEdit is the operator's certificate with its checkpoint's body
// edited by body (then signed again by the operator) and signature lines
// added after the operator's.
func checkpointEdit(body func(string) string, extraLines ...string) func(t testing.TB, f *fixture) []byte {
	return operatorCertT(func(t testing.TB, f *fixture, e *Envelope) {
		cp := e.Log.Checkpoint
		text := cp[:strings.LastIndex(cp, "\n\n")+1]
		if body != nil {
			var err error
			if cp, err = signNote(f.op, testOrigin, body(text)); err != nil {
				t.Fatal(err)
			}
		}
		e.Log.Checkpoint = cp + strings.Join(extraLines, "")
	})
}

// operatorCertT is operatorCert with an edit that may fail the test.
func operatorCertT(edit func(t testing.TB, f *fixture, e *Envelope)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		e := issue(t, f.op, testPayload(t, "req-0042", testIssued), nil)
		edit(t, f, e)
		return marshal(t, e)
	}
}

// witnessLine is a signature line by name over nothing in particular; b64
// spells its 68 bytes, canonically or with stray bits.
func witnessLine(name string, canonical bool) string {
	raw := make([]byte, 68)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	return "— " + name + " " + strayBits(base64.StdEncoding.EncodeToString(raw), !canonical) + "\n"
}

// strayBits sets, when set is true, a bit of the last base64 digit of b64
// (which ends in one "=") that no byte holds: lenient decoders read the
// same bytes, strict ones refuse it.
func strayBits(b64 string, set bool) string {
	if !set {
		return b64
	}
	i := len(b64) - 2
	d := strings.IndexByte(base64Digits, b64[i])
	if d%4 != 0 {
		panic("stray bits already set in " + b64)
	}
	return b64[:i] + string(base64Digits[d+1]) + b64[i+1:]
}

// tableEdit signs the test payload with the first scope entry's table and
// its layer's table replaced.
func tableEdit(scopeTable, layerTable string) func(t testing.TB, f *fixture) []byte {
	return payloadEdit(func(m map[string]any) {
		m["scope"].([]any)[0].(map[string]any)["table"] = scopeTable
		m["layers"].([]any)[0].(map[string]any)["table"] = layerTable
	})
}

// storeEdit signs the test payload with the first scope entry's and
// layer's store replaced.
func storeEdit(store string) func(t testing.TB, f *fixture) []byte {
	return payloadEdit(func(m map[string]any) {
		m["scope"].([]any)[0].(map[string]any)["store"] = store
		m["layers"].([]any)[0].(map[string]any)["store"] = store
	})
}

// hugeSizeCases are the certificates logged in trees of more than 2^62
// leaves: TestVerify_AnswersForHugeTrees runs them under a deadline.
func hugeSizeCases() []verifyCase {
	return []verifyCase{
		{name: "checkpoint of 2^62+1 leaves", want: VerdictValid, cert: hugeLogCert("4611686018427387905", 1<<62+1, 2, false)},
		{name: "checkpoint of 2^63-1 leaves, the last leaf", want: VerdictValid, cert: hugeLogCert("9223372036854775807", math.MaxInt64, math.MaxInt64-1, false)},
		{name: "checkpoint of 2^63-1 leaves, proof altered", want: VerdictNotInLog, cert: hugeLogCert("9223372036854775807", math.MaxInt64, 2, true)},
		{name: "checkpoint of 2^63 leaves", want: VerdictNotInLog, cert: hugeLogCert("9223372036854775808", math.MaxInt64, 2, false)},
		{name: "checkpoint of 2^64-1 leaves", want: VerdictNotInLog, cert: hugeLogCert("18446744073709551615", math.MaxInt64, 2, false)},
	}
}

func settledCases() []verifyCase {
	afterRotation := testRotation.AddDate(0, 0, 1)
	return append(hugeSizeCases(), []verifyCase{
		// request_id outside its set: the payload contradicts its own log.
		{name: "request_id empty", want: VerdictMalformed, cert: withRequestID("")},
		{name: "request_id of 129 characters", want: VerdictMalformed, cert: withRequestID(strings.Repeat("r", 129))},
		{name: "request_id of 128 characters", want: VerdictValid, cert: withRequestID(strings.Repeat("r", 128))},
		{name: "request_id with a space", want: VerdictMalformed, cert: withRequestID("req 0042")},
		{name: "request_id with a slash", want: VerdictMalformed, cert: withRequestID("req/0042")},
		{name: "request_id with a non-ASCII letter", want: VerdictMalformed, cert: withRequestID("réq-0042")},

		// null is a type fault wherever it stands, except as log.
		{name: "payload string member null", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) { m["tool"] = nil })},
		{name: "payload object member null", want: VerdictMalformed, cert: payloadEdit(func(m map[string]any) { m["subject"] = nil })},
		{name: "payload count null", want: VerdictMalformed, cert: layerEdit(func(l map[string]any) { l["residual"] = nil })},
		{name: "signature null", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) { m["signature"] = nil })},
		{name: "signature sig null", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) { m["signature"].(map[string]any)["sig"] = nil })},
		{name: "log index null", want: VerdictMalformed, cert: envelopeEdit(func(m map[string]any) { m["log"].(map[string]any)["index"] = nil })},
		{name: "log null", want: VerdictNotInLog, cert: envelopeEdit(func(m map[string]any) { m["log"] = nil })},

		// Unknown members anywhere in the envelope.
		{name: "unknown field in the log", want: VerdictSchemaMismatch, cert: envelopeEdit(func(m map[string]any) {
			m["log"].(map[string]any)["witness"] = "trust me"
		})},
		{name: "envelope member names spelled with escapes", want: VerdictValid, cert: envelopeBytesEdit(func(t testing.TB, f *fixture, cert string) string {
			return strings.NewReplacer(`"lethe_certificate"`, `"lethe\u005fcertificate"`, `"sig"`, `"\u0073ig"`).Replace(cert)
		})},

		// Checkpoint notes: canonical base64, names without space or control.
		{name: "checkpoint signature line not canonical base64", want: VerdictNotInLog, cert: operatorCert(func(e *Envelope) {
			cp := e.Log.Checkpoint
			split := strings.LastIndex(cp, "\n\n") + 2
			sp := strings.LastIndexByte(cp, ' ')
			e.Log.Checkpoint = cp[:sp+1] + strayBits(strings.TrimSuffix(cp[sp+1:], "\n"), true) + "\n"
			if !strings.HasPrefix(e.Log.Checkpoint[split:], "— ") {
				panic("no signature line")
			}
		})},
		{name: "checkpoint with a witness line not canonical base64", want: VerdictNotInLog, cert: checkpointEdit(nil, witnessLine("witness.example/w", false))},
		{name: "checkpoint with a witness line", want: VerdictValid, cert: checkpointEdit(nil, witnessLine("witness.example/w", true))},
		{name: "checkpoint with a witness line named with a no-break space", want: VerdictNotInLog, cert: checkpointEdit(nil, witnessLine("witness\u00a0example", true))},
		{name: "checkpoint with a witness line named with an ideographic space", want: VerdictNotInLog, cert: checkpointEdit(nil, witnessLine("witness\u3000example", true))},
		{name: "checkpoint with a witness line named with DEL", want: VerdictValid, cert: checkpointEdit(nil, witnessLine("witness\u007fexample", true))},
		{name: "checkpoint with a tab in an extension line", want: VerdictNotInLog, cert: checkpointEdit(func(b string) string { return b + "ext\tline\n" })},
		{name: "checkpoint with DEL and a C1 control in an extension line", want: VerdictValid, cert: checkpointEdit(func(b string) string { return b + "ext\u007f\u0090line\n" })},

		// What a certificate proves.
		{name: "empty scope", want: VerdictIncomplete, cert: payloadEdit(func(m map[string]any) {
			ids, _ := IDsRoot(nil)
			m["scope"], m["layers"] = []any{}, []any{}
			m["deleted_ids"] = map[string]any{"count": 0, "root": ids.Root}
		})},
		{name: "store in upper case", want: VerdictMalformed, cert: storeEdit("Postgres")},
		{name: "store of another product", want: VerdictMalformed, cert: storeEdit("mysql")},
		{name: "table name not in NFC", want: VerdictValid, cert: tableEdit("public.cafe\u0301", "public.cafe\u0301")},
		{name: "scope and layer table in different normal forms", want: VerdictMalformed, cert: tableEdit("public.caf\u00e9", "public.cafe\u0301")},

		// A disclosed key: not_after does not stop it, removing it does.
		{name: "certificate forged with a disclosed retired key, backdated into its window", want: VerdictValid, now: afterRotation.AddDate(0, 1, 0),
			cert: operatorCert(nil)},
		{name: "the same certificate once the disclosed key is removed", want: VerdictUnknownKey, now: afterRotation.AddDate(0, 1, 0),
			cert: operatorCert(nil),
			keys: func(f *fixture) KeySet {
				k, err := NewKeySet(testOrigin, f.next.TrustedKey(testRotation))
				if err != nil {
					panic(err)
				}
				return k
			}},
		// A fork: a log that shows each certificate another history. Each
		// verifies alone; only comparing checkpoints (consistency proofs)
		// shows the fork.
		{name: "certificate in a forked log", want: VerdictValid, cert: operatorCertT(func(t testing.TB, f *fixture, e *Envelope) {
			var l testLog
			l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-fork-1"})
			l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-fork-2"})
			i := l.append(t, e.Log.Leaf)
			l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-fork-3"})
			l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-fork-4"})
			_, cp := l.checkpoint(t, f.op)
			e.AttachLog(e.Log.Leaf, i, l.prove(t, i), cp)
		})},
	}...)
}

// settledRefusedKeyFiles are the keys files of issue 24 a verifier must
// refuse to load.
func settledRefusedKeyFiles(edit func(old, new string) string) map[string]string {
	origin := `"log_origin":"log.lethe.example/test"`
	return map[string]string{
		"log origin with a control character":  edit(origin, `"log_origin":"log.lethe.example/te\u0001st"`),
		"log origin with a no-break space":     edit(origin, `"log_origin":"log.lethe.example/te\u00a0st"`),
		"log origin with an ideographic space": edit(origin, `"log_origin":"log.lethe.example/te\u3000st"`),
		"log origin with a plus sign":          edit(origin, `"log_origin":"log.lethe.example/te+st"`),
		"key that is not a point of the curve": weakKeyFile("0200000000000000000000000000000000000000000000000000000000000000"),
		"identity key with the sign bit set":   weakKeyFile("0100000000000000000000000000000000000000000000000000000000000080"),
		"key encoded with y equal to p":        weakKeyFile("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
		"key of order 2 with the sign bit set": weakKeyFile("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
	}
}

// reportNow is the instant report vectors are verified at: after every
// report's "at".
var reportNow = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// hugeLogReport is the operator's sweep logged in a tree of 2^62+1 leaves.
func hugeLogReport(t testing.TB, f *fixture) []byte {
	sr, err := SignReport(f.op, testSweepReport())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := sr.Leaf()
	if err != nil {
		t.Fatal(err)
	}
	const size = 1<<62 + 1
	proof, root := hugeTreePath(size, size-1, tlog.RecordHash(leaf))
	cp, err := signNote(f.op, testOrigin, testOrigin+"\n"+strconv.FormatInt(size, 10)+"\n"+base64.StdEncoding.EncodeToString(root[:])+"\n")
	if err != nil {
		t.Fatal(err)
	}
	sr.AttachLog(leaf, size-1, proof, cp)
	return marshalReport(t, sr)
}

func settledReportCases() []reportCase {
	return []reportCase{
		{name: "logged in a tree of 2^62+1 leaves", want: VerdictValid, report: hugeLogReport},
		{name: "not logged, the log required", want: VerdictNotInLog, requireLog: true, report: operatorSweep(func(sr *SignedReport) { sr.Log = nil })},
		{name: "logged, the log required", want: VerdictValid, requireLog: true, report: operatorSweep(nil)},
		{name: "dated after the instant of verification", want: VerdictNotYetValid, now: testIssued.Add(-time.Nanosecond), report: operatorSweep(nil)},
		{name: "dated the instant of verification", want: VerdictValid, now: testIssued, report: operatorSweep(nil)},

		{name: "done more than found", want: VerdictMalformed, report: sweepPayload(`"found":3,"done":2`, `"found":3,"done":4`)},
		{name: "layer listed twice", want: VerdictMalformed, report: sweepPayload(`"store":"pinecone","table":"docs/default"`, `"store":"postgres","table":"public.chat_memory"`)},
		{name: "reconcile layer with a cutoff", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testReconcileReport())
			if err != nil {
				t.Fatal(err)
			}
			return signedReportBytesOf(t, f.op, testReconcileReport(), replaceOnce(t, sr.Payload, `"found":7,`, `"cutoff":"2026-03-03T12:00:00Z","found":7,`))
		}},
		{name: "reconcile with residual records", want: VerdictMalformed, report: func(t testing.TB, f *fixture) []byte {
			sr, err := SignReport(f.op, testReconcileReport())
			if err != nil {
				t.Fatal(err)
			}
			return signedReportBytesOf(t, f.op, testReconcileReport(), replaceOnce(t, sr.Payload, `"residual":0`, `"residual":1`))
		}},
		{name: "sweep layer without a cutoff", want: VerdictMalformed, report: sweepPayload(`,"cutoff":"2026-03-03T12:00:00Z"}]`, `}]`)},
		{name: "store in upper case", want: VerdictMalformed, report: sweepPayload(`"store":"postgres"`, `"store":"Postgres"`)},
		{name: "store of another product", want: VerdictMalformed, report: sweepPayload(`"store":"postgres"`, `"store":"mysql"`)},
		{name: "run_id null", want: VerdictMalformed, report: sweepPayload(`"run_id":"sweep-20260601T120000Z-0f1e2d3c"`, `"run_id":null`)},
		{name: "unknown member in the signature", want: VerdictSchemaMismatch, report: sweepText(`"alg": "ed25519"`, `"alg": "ed25519", "chain": []`)},
		{name: "unknown member in the log", want: VerdictSchemaMismatch, report: func(t testing.TB, f *fixture) []byte {
			return editJSON(t, operatorSweep(nil)(t, f), func(m map[string]any) { m["log"].(map[string]any)["witness"] = "x" })
		}},
	}
}

// TestVerify_AnswersForHugeTrees: every certificate logged in a tree of
// more than 2^62 leaves gets its verdict, where x/mod's proof check never
// returned. The deadline makes a loop a failure, not a hung test run.
func TestVerify_AnswersForHugeTrees(t *testing.T) {
	f := newFixture(t)
	for _, tc := range hugeSizeCases() {
		cert := tc.cert(t, f)
		returnsWithin(t, tc.name, func() {
			if got := Verify(cert, f.keys, testNow); got.Verdict != tc.want {
				t.Errorf("%s: verdict %s (%s), want %s", tc.name, got.Verdict, got.Reason, tc.want)
			}
		})
	}
	report := hugeLogReport(t, f)
	returnsWithin(t, "report in a tree of 2^62+1 leaves", func() {
		if _, err := VerifyReport(report, f.keys); err != nil {
			t.Error(err)
		}
	})
}
