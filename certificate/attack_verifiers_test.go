package certificate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Documents an outsider would write from docs/certificate.md alone to try
// the verifiers: v3 horizons the spec's rules reach only at their edges,
// and forget.replayed and forget.physical reports that contradict
// themselves or their log event. Every verifier must give each the same
// verdict, and the verdict the spec says.

// attackCase is one document and the verdict the spec gives it.
type attackCase struct {
	name string
	doc  func(t testing.TB, f *fixture) []byte
	want Verdict
}

// physicalReport signs payload as a forget.physical report of request
// req-0042 and logs its event as kind's (EventPhysical unless the case
// forges another).
func physicalReport(kind, payload string) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		return signedReportBytesOf(t, f.op, Report{Kind: kind, RunID: "req-0042"}, []byte(payload))
	}
}

// reportPayload is a lethe.report/v1 payload of kind with one layer.
func reportPayload(kind, layer string) string {
	return `{"schema":"lethe.report/v1","kind":"` + kind + `","run_id":"req-0042","at":"2026-06-01T12:00:00Z","layers":[` + layer + `]}`
}

func attackCases() []attackCase {
	// horizonText replaces old with new in the signed v3 payload's text.
	horizonText := func(old, new string) func(t testing.TB, f *fixture) []byte {
		return func(t testing.TB, f *fixture) []byte {
			_, payload, err := Sign(f.op, testPayloadV3(t, "req-0042", testIssued))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(payload), old) {
				t.Fatalf("no %q in %s", old, payload)
			}
			return signedPayload(t, f.op, []byte(strings.Replace(string(payload), old, new, 1)))
		}
	}
	const walEntry = `{"store":"postgres","copy":"pg_wal","status":"conditional","until":"",`
	const physicalLayer = `{"store":"postgres","table":"public.docs","found":10,"done":7,"residual":3,"method":"re-scan"}`
	return []attackCase{
		{"v3 horizon null", v3Edit(func(p map[string]any) { p["horizon"] = nil }), VerdictMalformed},
		{"v3 horizon entry null", v3Edit(func(p map[string]any) { p["horizon"] = []any{nil} }), VerdictMalformed},
		{"v3 horizon entry a string", v3Edit(func(p map[string]any) { p["horizon"] = []any{"pg_wal"} }), VerdictMalformed},
		{"v3 until a number", horizonEntry(2, func(h map[string]any) { h["until"] = 0 }), VerdictMalformed},
		{"v3 basis a number", horizonEntry(2, func(h map[string]any) { h["basis"] = 1 }), VerdictMalformed},
		{"v3 store __proto__", horizonEntry(2, func(h map[string]any) { h["store"] = "__proto__" }), VerdictMalformed},
		{"v3 copy toString", horizonEntry(2, func(h map[string]any) { h["copy"] = "toString" }), VerdictMalformed},
		{"v3 copy constructor", horizonEntry(2, func(h map[string]any) { h["copy"] = "constructor" }), VerdictMalformed},
		{"v3 status in upper case", horizonEntry(1, func(h map[string]any) { h["status"] = "Dated" }), VerdictMalformed},
		{"v3 copy with a trailing space", horizonEntry(0, func(h map[string]any) { h["copy"] = "pg_wal " }), VerdictMalformed},
		{"v3 until lowercase t and z", horizonEntry(1, func(h map[string]any) { h["until"] = "2026-07-01t12:00:00z" }), VerdictMalformed},
		{"v3 until a date only", horizonEntry(1, func(h map[string]any) { h["until"] = "2026-07-01" }), VerdictMalformed},
		{"v3 until with an offset", horizonEntry(1, func(h map[string]any) { h["until"] = "2026-07-01T14:00:00+02:00" }), VerdictValid},
		{"v3 until February 30", horizonEntry(1, func(h map[string]any) { h["until"] = "2026-02-30T12:00:00Z" }), VerdictMalformed},
		{"v1 payload with a horizon", v3Edit(func(p map[string]any) {
			p["schema"] = SchemaV1
			for _, l := range p["layers"].([]any) {
				delete(l.(map[string]any), "physical")
			}
		}), VerdictSchemaMismatch},
		{"v3 horizon member repeated in an entry", horizonText(walEntry, walEntry+`"store":"pinecone",`), VerdictMalformed},
		{"v3 horizon member repeated in the payload", horizonText(`"horizon":[`, `"horizon":[],"horizon":[`), VerdictMalformed},
		{"v3 status spelled with an escape", horizonText(`"status":"dated"`, `"status":"d\u0061ted"`), VerdictValid},
		{"v3 entry members in another order", horizonText(walEntry, `{"copy":"pg_wal","store":"postgres","until":"","status":"conditional",`), VerdictValid},

		// Reports of the kinds this session added.
		{"physical report", physicalReport(EventPhysical, reportPayload(EventPhysical, physicalLayer)), VerdictValid},
		{"physical report logged as a replay's event", physicalReport(EventReplayed, reportPayload(EventPhysical, physicalLayer)), VerdictNotInLog},
		{"replay report logged as a physical event", physicalReport(EventPhysical, reportPayload(EventReplayed, physicalLayer)), VerdictNotInLog},
		{"physical report with a cutoff", physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":7,"residual":3,"method":"re-scan","cutoff":"2026-06-01T12:00:00Z"}`)), VerdictMalformed},
		{"replay report with a cutoff", physicalReport(EventReplayed, reportPayload(EventReplayed,
			`{"store":"postgres","table":"public.docs","found":3,"done":3,"residual":0,"method":"scan","cutoff":"2026-06-01T12:00:00Z"}`)), VerdictMalformed},
		{"physical report with done beyond found", physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":11,"residual":0,"method":"re-scan"}`)), VerdictMalformed},
		// found is the pages scanned, done those free of the bytes,
		// residual those still holding them: each page is one or the other.
		{"physical report whose free and holding pages are more than those scanned", physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":10,"residual":10,"method":"re-scan"}`)), VerdictMalformed},
		{"physical report whose free and holding pages are fewer than those scanned", physicalReport(EventPhysical, reportPayload(EventPhysical,
			`{"store":"postgres","table":"public.docs","found":10,"done":0,"residual":0,"method":"re-scan"}`)), VerdictMalformed},
	}
}

// TestAttack_Verifiers_AgreeWithTheSpec runs every attack document through
// the Go verifier and, when node is there, node/verify.mjs (the browser
// page runs the same modules, bundled: certificate/webverify), and wants
// the spec's verdict from both.
func TestAttack_Verifiers_AgreeWithTheSpec(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, mustMarshalJSON(t, f.keys), 0o644); err != nil {
		t.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	for _, tc := range attackCases() {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc(t, f)
			now := testNow
			got, err := reportVerdict(doc, f.keys, ReportPolicy{Now: now})
			if got != tc.want {
				t.Errorf("go says %s (%v), want %s", got, err, tc.want)
			}
			if node == "" {
				return
			}
			file := filepath.Join(dir, slug(tc.name)+".json")
			if err := os.WriteFile(file, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, stdout, stderr := runNode(ctx, t, node, nil, keysFile, file, "--now", now.Format(time.RFC3339))
			verdict, _, _ := strings.Cut(strings.TrimPrefix(stdout, "verdict: "), "\n")
			if Verdict(verdict) != tc.want {
				t.Errorf("node says %q, want %s\nstdout: %s\nstderr: %s", verdict, tc.want, stdout, stderr)
			}
		})
	}
}
