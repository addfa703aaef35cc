package certificate

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// The cases of addenda folded into a certificate (docs/certificate.md,
// "Addenda"): a certificate vector, the addenda given beside it, and what
// every verifier must print: the certificate's verdict unchanged, the
// folded physical line, the replay line, and each addendum's verdict.
// TestVerifyWithAddenda_Folds runs them in Go; they are written to
// testdata/vectors (manifest "folds") for node/verify.mjs, the browser
// page and `lethe-proxy verify --addendum`.

type foldCase struct {
	name string
	// cert names the certificate case (verifyCases) whose vector file the
	// addenda are folded into; it is verified at that case's now unless
	// now is set.
	cert    string
	now     time.Time
	addenda []foldAddendum
	want    Verdict // the certificate's verdict, unchanged by any addendum
	// physical, horizon and replay are the lines printed beside the
	// verdict; "" for none.
	physical, horizon, replay string
}

// foldAddendum is one addendum file (addendum-<file>.json) and the
// verdict it must get; want "" when the certificate is not valid and
// nothing is checked.
type foldAddendum struct {
	file   string
	report func(t testing.TB, f *fixture) []byte
	want   Verdict
}

const foldRequest = "req-0042" // the request of the certificate vectors

// addendumReport is a report of kind about foldRequest's layers.
func addendumReport(kind string, at time.Time, layers ...ReportLayer) Report {
	return Report{Kind: kind, RunID: foldRequest, At: at, Layers: layers}
}

// rescanLayer is a re-scan of the certificate's PostgreSQL layer: scanned
// pages, holding those still holding the bytes.
func rescanLayer(scanned, holding int64) ReportLayer {
	return ReportLayer{Store: "postgres", Table: "public.langchain_pg_embedding", Found: scanned, Done: scanned - holding, Residual: holding,
		Method: "rescan: re-scan 1: physical: vacuum; public.langchain_pg_embedding_embedding_idx (hnsw): pages read and held bytes counted"}
}

// addendumBy signs r with s and logs it after pad other events, in a log
// whose checkpoint s signs, so that addenda have distinct log indexes.
func addendumBy(s func(f *fixture) *Signer, r Report, pad int, edit func(sr *SignedReport)) func(t testing.TB, f *fixture) []byte {
	return func(t testing.TB, f *fixture) []byte {
		signer := s(f)
		sr, err := SignReport(signer, r)
		if err != nil {
			t.Fatal(err)
		}
		var l testLog
		l.appendEvent(t, Event{Event: EventKeyRotated, KeyID: signer.KeyID()})
		for i := 0; i < pad; i++ {
			l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-" + string(rune('a'+i%26))})
		}
		leaf, err := sr.Leaf()
		if err != nil {
			t.Fatal(err)
		}
		i := l.append(t, leaf)
		l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-9999"})
		_, cp := l.checkpoint(t, signer)
		sr.AttachLog(leaf, i, l.prove(t, i), cp)
		if edit != nil {
			edit(sr)
		}
		return marshalReport(t, sr)
	}
}

func operatorKey(f *fixture) *Signer { return f.op }

// rawAddendum is an addendum file holding text, whatever it is.
func rawAddendum(text string) func(t testing.TB, f *fixture) []byte {
	return func(testing.TB, *fixture) []byte { return []byte(text) }
}

// The addenda of the cases, by file.
var (
	afterIssue = func(d time.Duration) time.Time { return testIssued.Add(d) }

	rescanResidue = foldAddendum{file: "re-scan-still-holding-bytes", report: addendumBy(operatorKey,
		addendumReport(EventPhysical, afterIssue(10*time.Minute), rescanLayer(27, 2)), 4, nil), want: VerdictValid}
	rescanClean = foldAddendum{file: "re-scan-clean", report: addendumBy(operatorKey,
		addendumReport(EventPhysical, afterIssue(20*time.Minute+250*time.Millisecond), rescanLayer(27, 0)), 6, nil), want: VerdictValid}
	rescanLost = foldAddendum{file: "re-scan-lost", report: addendumBy(operatorKey,
		addendumReport(EventPhysical, afterIssue(30*time.Minute), rescanLayer(0, 0)), 8, nil), want: VerdictValid}
	replayed = foldAddendum{file: "replay", report: addendumBy(operatorKey, addendumReport(EventReplayed, testIssued.AddDate(0, 0, 20),
		ReportLayer{Store: "postgres", Table: "public.langchain_pg_embedding", Found: 2, Done: 2, Method: "every record read; deleted with forget's queries"},
		ReportLayer{Store: "pinecone", Table: "docs/default", Found: 1, Done: 1, Method: "every record read; deleted with forget's queries"},
	), 11, nil), want: VerdictValid}
	otherRequest = foldAddendum{file: "of-another-request", report: addendumBy(operatorKey, Report{Kind: EventPhysical, RunID: "req-0043",
		At: afterIssue(20 * time.Minute), Layers: []ReportLayer{rescanLayer(27, 0)}}, 6, nil), want: VerdictNotThisCertificate}
	// The re-scan that found bytes in 2 pages, its payload replaced by
	// one that says 0 after signing: the signature no longer covers it.
	tampered = foldAddendum{file: "re-scan-edited-to-clean-after-signing", report: func(t testing.TB, f *fixture) []byte {
		clean, err := SignReport(f.op, addendumReport(EventPhysical, afterIssue(40*time.Minute), rescanLayer(27, 0)))
		if err != nil {
			t.Fatal(err)
		}
		return addendumBy(operatorKey, addendumReport(EventPhysical, afterIssue(40*time.Minute), rescanLayer(27, 2)), 9,
			func(sr *SignedReport) { sr.Payload = clean.Payload })(t, f)
	}, want: VerdictPayloadTampered}
	older = foldAddendum{file: "dated-before-the-certificate", report: addendumBy(operatorKey,
		addendumReport(EventPhysical, testIssued.Add(-time.Hour), rescanLayer(27, 0)), 3, nil), want: VerdictPredatesCertificate}
	attackers = foldAddendum{file: "signed-with-an-attackers-key", report: addendumBy(func(f *fixture) *Signer { return f.attacker },
		addendumReport(EventPhysical, afterIssue(40*time.Minute), rescanLayer(27, 0)), 9, nil), want: VerdictUnknownKey}
	unlogged = foldAddendum{file: "not-logged", report: func(t testing.TB, f *fixture) []byte {
		sr, err := SignReport(f.op, addendumReport(EventPhysical, afterIssue(40*time.Minute), rescanLayer(27, 0)))
		if err != nil {
			t.Fatal(err)
		}
		return marshalReport(t, sr)
	}, want: VerdictNotInLog}
	sweepOfTheRequest = foldAddendum{file: "sweep-naming-the-request", report: func(t testing.TB, f *fixture) []byte {
		cutoff := testIssued
		return addendumBy(operatorKey, addendumReport(EventRetentionSwept, afterIssue(time.Hour),
			ReportLayer{Store: "postgres", Table: "public.langchain_pg_embedding", Found: 1, Done: 1, Cutoff: &cutoff, Method: "older than the cutoff"}), 2, nil)(t, f)
	}, want: VerdictNotThisCertificate}
	otherLayer = foldAddendum{file: "re-scan-of-another-table", report: addendumBy(operatorKey, addendumReport(EventPhysical, afterIssue(20*time.Minute),
		ReportLayer{Store: "postgres", Table: "public.other", Found: 5, Done: 5}), 6, nil), want: VerdictNotThisCertificate}
	// A file that is not one JSON object of the subset is no report, and
	// gets the verdict it gets verified alone (R1, R2): malformed, not
	// schema_mismatch, which is for a JSON object without lethe_report.
	notJSON       = foldAddendum{file: "not-json", report: rawAddendum("not a report\n"), want: VerdictMalformed}
	anArray       = foldAddendum{file: "json-array", report: rawAddendum("[]\n"), want: VerdictMalformed}
	rescanNoLayer = foldAddendum{file: "re-scan-of-no-layer", report: addendumBy(operatorKey,
		addendumReport(EventPhysical, afterIssue(20*time.Minute)), 6, nil), want: VerdictValid}
	nextKey = foldAddendum{file: "re-scan-signed-by-the-next-key-after-rotation", report: addendumBy(func(f *fixture) *Signer { return f.next },
		addendumReport(EventPhysical, testRotation.AddDate(0, 0, 1), rescanLayer(27, 0)), 5, nil), want: VerdictValid}
)

const (
	foldV2     = "v2 pages scanned still hold the bytes"
	certifiedV = "postgres public.langchain_pg_embedding: 13 of 27 pages scanned still hold the bytes"
	notScanned = "; pinecone docs/default: not scanned"
	replayLn   = "re-applied after a restore at 2026-06-21T12:00:00Z: 3 records came back, 3 deleted, 0 left (addendum, log index 12)"
)

func foldCases() []foldCase {
	return []foldCase{
		{name: "a re-scan and a replay fold in", cert: foldV2, addenda: []foldAddendum{rescanResidue, rescanClean, replayed}, want: VerdictValid,
			physical: certifiedV + " (certified) -> no bytes in 27 pages scanned at 2026-06-01T12:20:00.25Z (addendum, log index 7)" + notScanned, replay: replayLn},
		{name: "the newest re-scan wins in any order", cert: foldV2, addenda: []foldAddendum{rescanClean, rescanResidue}, want: VerdictValid,
			physical: certifiedV + " (certified) -> no bytes in 27 pages scanned at 2026-06-01T12:20:00.25Z (addendum, log index 7)" + notScanned},
		{name: "a re-scan still finding bytes", cert: foldV2, addenda: []foldAddendum{rescanResidue}, want: VerdictValid,
			physical: certifiedV + " (certified) -> bytes in 2 of 27 pages scanned at 2026-06-01T12:10:00Z (addendum, log index 5)" + notScanned},
		{name: "a lost re-scan claims nothing", cert: foldV2, addenda: []foldAddendum{rescanResidue, rescanLost}, want: VerdictValid,
			physical: certifiedV + " (certified) -> no pages scanned at 2026-06-01T12:30:00Z (addendum, log index 9)" + notScanned},
		{name: "a replay alone", cert: foldV2, addenda: []foldAddendum{replayed}, want: VerdictValid, physical: certifiedV + notScanned, replay: replayLn},
		{name: "an addendum of another request", cert: foldV2, addenda: []foldAddendum{otherRequest}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "a tampered addendum never improves the state", cert: foldV2, addenda: []foldAddendum{rescanResidue, tampered}, want: VerdictValid,
			physical: certifiedV + " (certified) -> bytes in 2 of 27 pages scanned at 2026-06-01T12:10:00Z (addendum, log index 5)" + notScanned},
		{name: "an addendum older than the certificate", cert: foldV2, addenda: []foldAddendum{older}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "an addendum from an attackers key", cert: foldV2, addenda: []foldAddendum{attackers}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "an addendum without its log proof", cert: foldV2, addenda: []foldAddendum{unlogged}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "a sweep naming the request is no addendum", cert: foldV2, addenda: []foldAddendum{sweepOfTheRequest}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "a re-scan of a table the certificate does not have", cert: foldV2, addenda: []foldAddendum{otherLayer}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "addenda that are no JSON object", cert: foldV2, addenda: []foldAddendum{notJSON, anArray}, want: VerdictValid, physical: certifiedV + notScanned},
		{name: "a re-scan signed by the next key after rotation", cert: foldV2, now: testRotation.AddDate(0, 0, 2), addenda: []foldAddendum{nextKey}, want: VerdictValid,
			physical: certifiedV + " (certified) -> no bytes in 27 pages scanned at 2026-09-02T00:00:00Z (addendum, log index 6)" + notScanned},
		{name: "a v1 certificate with a re-scan", cert: "valid", addenda: []foldAddendum{rescanClean}, want: VerdictValid,
			physical: "postgres public.langchain_pg_embedding: not scanned (certified) -> no bytes in 27 pages scanned at 2026-06-01T12:20:00.25Z (addendum, log index 7)" + notScanned},
		{name: "a v1 certificate with a re-scan of no layer gets the line, without arrows", cert: "valid", addenda: []foldAddendum{rescanNoLayer}, want: VerdictValid,
			physical: "postgres public.langchain_pg_embedding: not scanned" + notScanned},
		{name: "a v3 certificate keeps its horizon", cert: "v3 horizon of one store", addenda: []foldAddendum{rescanClean}, want: VerdictValid,
			physical: certifiedV + " (certified) -> no bytes in 27 pages scanned at 2026-06-01T12:20:00.25Z (addendum, log index 7)" + notScanned,
			horizon:  "pinecone provider_purge: until 2026-08-30T12:00:00Z"},
		{name: "nothing is folded beside an expired certificate", cert: "expired", addenda: []foldAddendum{
			{file: rescanClean.file, report: rescanClean.report}}, want: VerdictExpired},
	}
}

// certCase finds the certificate case named name.
func certCase(t testing.TB, name string) verifyCase {
	t.Helper()
	for _, tc := range verifyCases() {
		if tc.name == name {
			return tc
		}
	}
	t.Fatalf("no certificate case %q", name)
	return verifyCase{}
}

// foldVectorFile is the file of an addendum in the vectors directory.
func foldVectorFile(a foldAddendum) string { return "addendum-" + a.file + ".json" }

func TestVerifyWithAddenda_Folds(t *testing.T) {
	f := newFixture(t)
	for _, tc := range foldCases() {
		t.Run(tc.name, func(t *testing.T) {
			cc := certCase(t, tc.cert)
			now := tc.now
			if now.IsZero() {
				now = cc.now
			}
			if now.IsZero() {
				now = testNow
			}
			var files []AddendumFile
			for _, a := range tc.addenda {
				files = append(files, AddendumFile{Name: foldVectorFile(a), Data: a.report(t, f)})
			}
			got := VerifyWithAddenda(cc.cert(t, f), files, f.keys, now)
			if got.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Reason, tc.want)
			}
			if got.Physical != tc.physical || got.Horizon != tc.horizon || got.Replay != tc.replay {
				t.Errorf("lines\n physical %q\n horizon  %q\n replay   %q\nwant\n physical %q\n horizon  %q\n replay   %q",
					got.Physical, got.Horizon, got.Replay, tc.physical, tc.horizon, tc.replay)
			}
			if tc.want != VerdictValid {
				if len(got.Addenda) != 0 {
					t.Errorf("addenda checked beside verdict %s: %+v", got.Verdict, got.Addenda)
				}
				return
			}
			if len(got.Addenda) != len(tc.addenda) {
				t.Fatalf("%d addenda results for %d addenda", len(got.Addenda), len(tc.addenda))
			}
			for i, a := range tc.addenda {
				if r := got.Addenda[i]; r.Verdict != a.want || r.Name != foldVectorFile(a) || r.Reason == "" {
					t.Errorf("addendum %s: %s (%s), want %s", a.file, r.Verdict, r.Reason, a.want)
				}
			}
		})
	}
}

// Without addenda, VerifyWithAddenda is Verify: every certificate case
// gets the same result.
func TestVerifyWithAddenda_WithoutAddendaIsVerify(t *testing.T) {
	f := newFixture(t)
	for _, tc := range verifyCases() {
		if tc.noVector {
			continue
		}
		now := tc.now
		if now.IsZero() {
			now = testNow
		}
		keys := f.keys
		if tc.keys != nil {
			keys = tc.keys(f)
		}
		cert := tc.cert(t, f)
		want := Verify(cert, keys, now)
		got := VerifyWithAddenda(cert, nil, keys, now)
		if got.Result.Verdict != want.Verdict || got.Reason != want.Reason || got.Physical != want.Physical || got.Horizon != want.Horizon || got.Replay != "" {
			t.Errorf("%s: %+v, Verify %+v", tc.name, got, want)
		}
	}
}

// A valid addendum that is not a report (a certificate given as an
// addendum) is refused, never folded, and the reason says what an
// addendum is.
func TestVerifyWithAddenda_ACertificateIsNoAddendum(t *testing.T) {
	f := newFixture(t)
	cert := v2Cert(func() *Physical { return testPhysical(testIssued) }, nil)(t, f)
	got := VerifyWithAddenda(cert, []AddendumFile{{Name: "cert.json", Data: cert}}, f.keys, testNow)
	if !got.Valid() || got.AllFolded() || got.Addenda[0].Verdict != VerdictSchemaMismatch {
		b, _ := json.Marshal(got.Addenda)
		t.Fatalf("%s %s", got.Verdict, b)
	}
}

// An addendum file over MaxSize is oversized, as it is verified alone (R1),
// not schema_mismatch: its size is checked before anything is parsed.
func TestVerifyWithAddenda_AnOversizedFileIsOversized(t *testing.T) {
	f := newFixture(t)
	cert := v2Cert(func() *Physical { return testPhysical(testIssued) }, nil)(t, f)
	big := append([]byte(`{"lethe_report":1,"pad":"`), bytes.Repeat([]byte("x"), MaxSize)...)
	got := VerifyWithAddenda(cert, []AddendumFile{{Name: "big.json", Data: append(big, `"}`...)}}, f.keys, testNow)
	if !got.Valid() || got.Addenda[0].Verdict != VerdictOversized {
		t.Fatalf("%s: addendum %s (%s), want oversized", got.Verdict, got.Addenda[0].Verdict, got.Addenda[0].Reason)
	}
}
