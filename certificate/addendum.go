package certificate

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// An addendum is a signed report a completed forget's verifiers fold into
// its certificate's verdict (docs/certificate.md, "Addenda"): a
// forget.physical report (a later re-scan of a layer's pages, or the
// batched physical step's scan) or a forget.replayed report (the forget
// re-applied after a restore), whose run_id is the certificate's
// request_id. The certificate is never re-signed: the addenda are logged
// reports of their own, and VerifyWithAddenda checks each as any report
// and then that it names this certificate.

// The verdicts of an addendum that is a genuine report but no addendum of
// this certificate. VerifyWithAddenda gives an addendum that is not a
// genuine, logged report the verdict VerifyReportWith gives it.
const (
	// VerdictNotThisCertificate: run_id is another request's, the kind
	// is no addendum's, or a re-scan names a layer the certificate does
	// not have.
	VerdictNotThisCertificate Verdict = "not_this_certificate"
	// VerdictPredatesCertificate: the addendum's at is before the
	// certificate's issued_at; an addendum reports what came after.
	VerdictPredatesCertificate Verdict = "predates_certificate"
)

// AddendumFile is one addendum as given to VerifyWithAddenda: a name for
// people (its file name) and its bytes.
type AddendumFile struct {
	Name string
	Data []byte
}

// AddendumResult is what VerifyWithAddenda made of one addendum: folded
// (Verdict VerdictValid, Report set), or refused and why. A refused
// addendum is left out of the fold: it never changes what is printed
// beside the verdict.
type AddendumResult struct {
	Name    string
	Verdict Verdict
	Reason  string
	// Report is the addendum's report when it was folded.
	Report *Report
	// LogIndex is where the log holds a folded addendum's event.
	LogIndex int64
}

// Folded is a certificate's Result with its addenda folded in. Verdict
// and Reason are the certificate's, unchanged: valid is a verified
// logical erasure, and no addendum makes it more or less so. Physical is
// PhysicalSummary with, for each layer a folded re-scan names, the
// newest re-scan's state after the certified one; Replay says when the
// forget was last re-applied after a restore.
type Folded struct {
	Result
	Replay  string
	Addenda []AddendumResult
}

// AllFolded reports whether every addendum given was folded.
func (f Folded) AllFolded() bool {
	for _, a := range f.Addenda {
		if a.Verdict != VerdictValid {
			return false
		}
	}
	return true
}

// VerifyWithAddenda verifies a certificate as Verify does and, beside a
// valid verdict, checks each addendum (as a report under a ReportPolicy
// of now with the log required, then that it names this certificate and
// does not predate it) and folds those that pass into the physical and
// replay lines. Beside any other verdict nothing is folded and Addenda is
// empty: a certificate that proves nothing gains nothing from addenda.
// With no addenda it is Verify. It never panics, whatever the inputs hold.
func VerifyWithAddenda(data []byte, addenda []AddendumFile, keys KeySet, now time.Time) Folded {
	out := Folded{Result: Verify(data, keys, now)}
	if !out.Valid() || len(addenda) == 0 {
		return out
	}
	p := out.Payload
	var physical []AddendumResult
	var replay *AddendumResult
	for _, a := range addenda {
		res := checkAddendum(a, p, keys, now)
		out.Addenda = append(out.Addenda, res)
		if res.Verdict != VerdictValid {
			continue
		}
		switch res.Report.Kind {
		case EventPhysical:
			physical = append(physical, res)
		case EventReplayed:
			if replay == nil || newer(res, *replay) {
				r := res
				replay = &r
			}
		}
	}
	if len(physical) > 0 {
		out.Physical = foldPhysical(p, physical)
	}
	if replay != nil {
		out.Replay = replayLine(*replay)
	}
	return out
}

// checkAddendum runs checks A1–A5 of docs/certificate.md ("Addenda") on
// one addendum of the valid certificate p.
func checkAddendum(a AddendumFile, p *Payload, keys KeySet, now time.Time) AddendumResult {
	res := AddendumResult{Name: a.Name}
	refuse := func(v Verdict, why string) AddendumResult {
		res.Verdict, res.Reason = v, why
		return res
	}
	// A1: a genuine report, logged, not dated after now. A file over
	// MaxSize or not one JSON object of the subset gets the verdict it gets
	// alone (R1, R2); only a JSON object without lethe_report is no report.
	if !IsReport(a.Data) {
		// parseSigned stops at R1 or R2 for such a file; a JSON object
		// without lethe_report fails its version member (schema_mismatch).
		if _, v, why := parseSigned(a.Data, reportForm); v == VerdictOversized || v == VerdictMalformed {
			return refuse(v, why)
		}
		return refuse(VerdictSchemaMismatch, "not a signed report (no member lethe_report): an addendum is a forget.physical or forget.replayed report")
	}
	r, err := VerifyReportWith(a.Data, keys, ReportPolicy{Now: now, RequireLog: true})
	if re := (*ReportError)(nil); errors.As(err, &re) {
		return refuse(re.Verdict, re.Reason)
	} else if err != nil {
		return refuse(VerdictMalformed, err.Error())
	}
	// A2: a kind that reports on a completed forget.
	if r.Kind != EventPhysical && r.Kind != EventReplayed {
		return refuse(VerdictNotThisCertificate, fmt.Sprintf("a %s report is no addendum; addenda are %s and %s reports", r.Kind, EventPhysical, EventReplayed))
	}
	// A3: this certificate's request.
	if r.RunID != p.RequestID {
		return refuse(VerdictNotThisCertificate, fmt.Sprintf("run_id %s is another request's; this certificate is request %s", r.RunID, p.RequestID))
	}
	// A4: after the certificate.
	if r.At.Before(p.IssuedAt) {
		return refuse(VerdictPredatesCertificate, fmt.Sprintf("at %s is before the certificate's issued_at %s; an addendum reports what followed the certificate", rfc3339Nano(r.At), rfc3339(p.IssuedAt)))
	}
	// A5: a re-scan looks at the certificate's own layers.
	if r.Kind == EventPhysical {
		for _, l := range r.Layers {
			if layerIndex(p, l.Store, l.Table) < 0 {
				return refuse(VerdictNotThisCertificate, fmt.Sprintf("it re-scans %s %s, which is no layer of this certificate", l.Store, l.Table))
			}
		}
	}
	res.Verdict, res.Report = VerdictValid, r
	res.LogIndex, _ = reportIndex(a.Data)
	res.Reason = fmt.Sprintf("%s at %s, leaf %d of the log, folded", r.Kind, rfc3339Nano(r.At), res.LogIndex)
	return res
}

// reportIndex is the log index of a report VerifyReportWith accepted with
// the log required.
func reportIndex(data []byte) (int64, bool) {
	e, v, _ := parseSigned(data, reportForm)
	if v != "" || e.Log == nil {
		return 0, false
	}
	return e.Log.Index, true
}

func layerIndex(p *Payload, store, table string) int {
	for i, l := range p.Layers {
		if l.Store == store && l.Table == table {
			return i
		}
	}
	return -1
}

// newer orders folded addenda: the later at, then the later log index.
func newer(a, b AddendumResult) bool {
	if !a.Report.At.Equal(b.Report.At) {
		return a.Report.At.After(b.Report.At)
	}
	return a.LogIndex > b.LogIndex
}

// foldPhysical is the physical line of p with the newest folded re-scan
// of each layer after its certified state:
// "<store> <table>: <certified state> (certified) -> <state at T>
// (addendum, log index N)"; layers no re-scan names keep their line.
func foldPhysical(p *Payload, rescans []AddendumResult) string {
	parts := make([]string, len(p.Layers))
	for i, l := range p.Layers {
		certified := l.Physical.state()
		parts[i] = l.Store + " " + l.Table + ": " + certified
		var latest *AddendumResult
		var layer ReportLayer
		for j, a := range rescans {
			for _, rl := range a.Report.Layers {
				if rl.Store == l.Store && rl.Table == l.Table && (latest == nil || newer(a, *latest)) {
					latest, layer = &rescans[j], rl
				}
			}
		}
		if latest != nil {
			parts[i] += fmt.Sprintf(" (certified) -> %s at %s (addendum, log index %d)", rescanState(layer), rfc3339Nano(latest.Report.At), latest.LogIndex)
		}
	}
	return strings.Join(parts, "; ")
}

// rescanState is a re-scan's layer in a few words: found is the pages
// scanned, residual those still holding the bytes.
func rescanState(l ReportLayer) string {
	switch {
	case l.Residual > 0:
		return fmt.Sprintf("bytes in %d of %d pages scanned", l.Residual, l.Found)
	case l.Found > 0:
		return fmt.Sprintf("no bytes in %d pages scanned", l.Found)
	}
	// A re-scan that was not possible (the bytes to look for were lost)
	// scanned nothing: it claims nothing either way.
	return "no pages scanned"
}

// replayLine is the replay line of the newest folded replay: when, and
// its records summed over its layers.
func replayLine(a AddendumResult) string {
	// Sums of 64-bit counts may not fit in 64 bits; every verifier prints
	// them exactly.
	found, done, residual := new(big.Int), new(big.Int), new(big.Int)
	for _, l := range a.Report.Layers {
		found.Add(found, big.NewInt(l.Found))
		done.Add(done, big.NewInt(l.Done))
		residual.Add(residual, big.NewInt(l.Residual))
	}
	return fmt.Sprintf("re-applied after a restore at %s: %d records came back, %d deleted, %d left (addendum, log index %d)",
		rfc3339Nano(a.Report.At), found, done, residual, a.LogIndex)
}
