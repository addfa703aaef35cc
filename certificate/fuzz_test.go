package certificate

import (
	"errors"
	"slices"
	"testing"
)

var allVerdicts = []Verdict{
	VerdictValid, VerdictPayloadTampered, VerdictBadSignature, VerdictUnknownKey, VerdictKeyMismatch,
	VerdictKeyIDMismatch, VerdictSchemaMismatch, VerdictExpired, VerdictNotInLog, VerdictMalformed, VerdictOversized,
	VerdictNotYetValid, VerdictIncomplete,
}

// FuzzVerify feeds Verify arbitrary bytes, starting from the seed corpus in
// testdata/fuzz/FuzzVerify. Verify must not panic, must return a documented
// verdict with a reason, and Parse must agree with it on structure.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Verify(data, fx.keys, testNow)
		if !slices.Contains(allVerdicts, r.Verdict) || r.Reason == "" {
			t.Fatalf("undocumented result %+v", r)
		}
		if r.Valid() && r.Payload == nil {
			t.Fatal("valid without a payload")
		}
		if _, err := Parse(data); err != nil && !slices.Contains([]Verdict{VerdictOversized, VerdictMalformed, VerdictSchemaMismatch}, r.Verdict) {
			t.Fatalf("Parse failed (%v) but Verify got past parsing to %s", err, r.Verdict)
		}
	})
}

// FuzzVerifyReport feeds VerifyReport arbitrary bytes, starting from the
// report cases. It must not panic, must refuse with a *ReportError of a
// documented verdict, and must vouch only for a report it would sign.
func FuzzVerifyReport(f *testing.F) {
	fx := newFixture(f)
	for _, tc := range reportCases() {
		f.Add(tc.report(f, fx))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := VerifyReport(data, fx.keys)
		if err != nil {
			var re *ReportError
			if !errors.As(err, &re) || !slices.Contains(allVerdicts, re.Verdict) || re.Verdict == VerdictValid || re.Reason == "" {
				t.Fatalf("undocumented refusal %v", err)
			}
			return
		}
		if cerr := r.check(); cerr != nil || r.Schema != ReportSchemaV1 {
			t.Fatalf("vouched for a report SignReport refuses: %v", cerr)
		}
	})
}
