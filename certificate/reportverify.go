package certificate

import (
	"bytes"
	"fmt"
	"time"
)

// The members of each object of a signed report, in the order of the Go
// struct fields (TestSchema_MembersMatchStructs keeps them in step).
var (
	reportEnvelopeMembers = []string{"lethe_report", "payload", "payload_sha256", "signature", "log"}
	reportMembers         = []string{"schema", "kind", "run_id", "at", "layers"}
	reportLayerMembers    = []string{"store", "table", "found", "done", "residual", "method", "cutoff"}
)

// A ReportError is why VerifyReport refused a report: the verdict of the
// first check that failed (docs/certificate.md, "Verifying a report"),
// named as for certificates, and a reason for people.
type ReportError struct {
	Verdict Verdict
	Reason  string
}

func (e *ReportError) Error() string {
	return fmt.Sprintf("certificate: report: %s: %s", e.Verdict, e.Reason)
}

// IsReport reports whether data reads as a signed report rather than a
// certificate: a JSON object of the subset with a member "lethe_report".
// Anything else, including input that is not JSON of the subset, is for
// Verify, which gives it its verdict.
func IsReport(data []byte) bool {
	if len(data) > MaxSize {
		return false
	}
	r, err := newJSONReader(string(data), 64)
	return err == nil && r.fields(0, reportEnvelopeMembers).vals[0] != 0
}

// VerifyReport checks a signed report against the trusted keys: it is a
// lethe.report/v1 of the JSON subset, signed by a trusted key whose window
// holds its "at", and, when it carries a log section, a checkpoint of the
// trusted log covers its event. It returns the report it vouches for, or a
// *ReportError. It never panics, whatever data holds. It is
// VerifyReportWith and no ReportPolicy: no clock, and a report without a
// log section is genuine.
func VerifyReport(data []byte, keys KeySet) (*Report, error) {
	return VerifyReportWith(data, keys, ReportPolicy{})
}

// ReportPolicy is what a reader of reports asks beyond VerifyReport's
// checks (docs/certificate.md, "Verifying a report", R16a and R17).
type ReportPolicy struct {
	// Now, when set, is the instant of verification: a report whose "at"
	// is after it is VerdictNotYetValid. A report has no end of validity.
	Now time.Time
	// RequireLog makes a report without a log section VerdictNotInLog
	// instead of genuine and unlogged.
	RequireLog bool
}

// VerifyReportWith is VerifyReport under policy.
func VerifyReportWith(data []byte, keys KeySet, policy ReportPolicy) (*Report, error) {
	refuse := func(v Verdict, why string) (*Report, error) {
		return nil, &ReportError{Verdict: v, Reason: why}
	}
	e, v, why := parseSigned(data, reportForm)
	if v != "" {
		return refuse(v, why)
	}
	trusted, v, why := checkSignature(e.Signature, e.Payload, e.PayloadSHA256, keys)
	if v != "" {
		return refuse(v, why)
	}
	r, v, why := parseReport(e.Payload)
	if v != "" {
		return refuse(v, "payload: "+why)
	}
	if !trusted.Covers(r.At) {
		return refuse(VerdictUnknownKey, fmt.Sprintf("at %s is outside the window of key %s (%s)", rfc3339Nano(r.At), trusted.ID, window(trusted)))
	}
	if !policy.Now.IsZero() && policy.Now.Before(r.At) {
		return refuse(VerdictNotYetValid, fmt.Sprintf("at %s; it is now %s: check the clock, or verify again later", rfc3339Nano(r.At), rfc3339Nano(policy.Now)))
	}
	if e.Log == nil {
		if policy.RequireLog {
			return refuse(VerdictNotInLog, "the report has no log section and the log was required; ask the operator for the logged report")
		}
		return r, nil
	}
	want, err := reportLeaf(r.Kind, r.RunID, e.PayloadSHA256)
	if err != nil {
		return refuse(VerdictNotInLog, fmt.Sprintf("no log event can name this report: %v", err))
	}
	if !bytes.Equal(e.Log.Leaf, want) {
		return refuse(VerdictNotInLog, fmt.Sprintf("log.leaf is not this report's event; want %s", want))
	}
	if _, err := checkInclusion(e.Log, keys, r.At); err != nil {
		return refuse(VerdictNotInLog, err.Error())
	}
	return r, nil
}

// parseReport reads signed payload bytes as a lethe.report/v1: its schema
// and kind first (schema_mismatch), then members (schema_mismatch), types
// and values (malformed), then whether it contradicts itself (malformed).
func parseReport(data []byte) (*Report, Verdict, string) {
	text := string(data)
	r, err := newJSONReader(text, len(text)/16+16)
	if err != nil {
		return nil, VerdictMalformed, err.Error()
	}
	f := r.fields(0, reportMembers)
	if t := f.vals[0]; t == 0 || r.toks[t].kind != jsonString || r.stringAt(t) != ReportSchemaV1 {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("schema is %v; this verifier reads %q", r.generic(t), ReportSchemaV1)
	}
	if t := f.vals[1]; t == 0 || r.toks[t].kind != jsonString || !isReportKind(r.stringAt(t)) {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("kind is %v; this verifier reads %q, %q, %q and %q", r.generic(t), EventRetentionSwept, EventReconcileAdopted, EventReplayed, EventPhysical)
	}
	rep := &Report{
		Schema: r.str(r.get(&f, 0)),
		Kind:   r.str(r.get(&f, 1)),
		RunID:  r.str(r.get(&f, 2)),
		At:     r.time(r.get(&f, 3)),
		Layers: readArray(&r, r.get(&f, 4), func(t int32) ReportLayer { return readReportLayer(&r, t) }),
	}
	r.done(&f)
	if v, why := r.verdict(); v != "" {
		return nil, v, why
	}
	if err := rep.check(); err != nil {
		return nil, VerdictMalformed, err.Error()
	}
	return rep, "", ""
}

func isReportKind(kind string) bool {
	return kind == EventRetentionSwept || kind == EventReconcileAdopted || kind == EventReplayed || kind == EventPhysical
}

func readReportLayer(r *jsonReader, t int32) (l ReportLayer) {
	if f, ok := r.object(t, reportLayerMembers); ok {
		l = ReportLayer{
			Store:    r.str(r.get(&f, 0)),
			Table:    r.str(r.get(&f, 1)),
			Found:    r.int(r.get(&f, 2)),
			Done:     r.int(r.get(&f, 3)),
			Residual: r.int(r.get(&f, 4)),
			Method:   r.str(r.get(&f, 5)),
		}
		// cutoff is optional (a reconcile has none), but never null.
		if c := f.vals[6]; c != 0 {
			cutoff := r.time(c)
			l.Cutoff = &cutoff
		}
		r.done(&f)
	}
	return l
}
