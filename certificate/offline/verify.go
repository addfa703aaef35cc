package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
)

// ReadEvidence reads the certificate or signed report in the file name
// ("-": stdin), at most one byte more than a certificate may hold, so an
// oversized input gets its verdict without being read whole.
func ReadEvidence(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, certificate.MaxSize+1))
}

// Verify verifies data, a deletion certificate or a signed report, against
// keys under policy, prints the verdict on stdout (for a valid v2 or v3
// certificate, the physical state of each layer on the next line, and for
// a valid v3 certificate the horizon of each kind of copy after it; for a
// genuine report, what it says, layer by layer) and says whether data is
// valid.
// policy.RequireLog applies to reports: a certificate always needs its
// log proof.
func Verify(data []byte, keys certificate.KeySet, policy certificate.ReportPolicy, stdout io.Writer) bool {
	if certificate.IsReport(data) {
		return verifyReport(data, keys, policy, stdout)
	}
	return VerifyWithAddenda(data, nil, keys, policy.Now, stdout)
}

// VerifyWithAddenda verifies the certificate data with its addenda beside
// it (certificate.VerifyWithAddenda) as of now and prints the verdict, the
// lines beside it (physical, with the newest re-scan of each layer folded
// in; horizon; replay) and a line per addendum: folded, or refused and
// why. It says whether the certificate is valid and every addendum was
// folded. With no addenda it prints what Verify prints for a certificate.
func VerifyWithAddenda(data []byte, addenda []certificate.AddendumFile, keys certificate.KeySet, now time.Time, stdout io.Writer) bool {
	r := certificate.VerifyWithAddenda(data, addenda, keys, now)
	fmt.Fprintf(stdout, "verdict: %s\n", r.Verdict)
	// Beside the verdict, never in it: valid is the logical erasure.
	if r.Physical != "" {
		fmt.Fprintf(stdout, "physical: %s\n", r.Physical)
	}
	if r.Horizon != "" {
		fmt.Fprintf(stdout, "horizon: %s\n", r.Horizon)
	}
	if r.Replay != "" {
		fmt.Fprintf(stdout, "replay: %s\n", r.Replay)
	}
	for _, a := range r.Addenda {
		fmt.Fprintf(stdout, "addendum %s: %s: %s\n", a.Name, a.Verdict, a.Reason)
	}
	if len(addenda) > 0 && !r.Valid() {
		fmt.Fprintf(stdout, "addenda: none folded: the certificate is not valid\n")
	}
	fmt.Fprintf(stdout, "reason: %s\n", r.Reason)
	return r.Valid() && r.AllFolded()
}

// verifyReport checks a signed report's signature, date and log proof
// under policy (certificate.VerifyReportWith) and prints what the report
// says, layer by layer.
func verifyReport(data []byte, keys certificate.KeySet, policy certificate.ReportPolicy, stdout io.Writer) bool {
	r, err := certificate.VerifyReportWith(data, keys, policy)
	if re := (*certificate.ReportError)(nil); errors.As(err, &re) {
		fmt.Fprintf(stdout, "verdict: %s\nreason: %s\n", re.Verdict, re.Reason)
		return false
	} else if err != nil {
		fmt.Fprintf(stdout, "verdict: %s\nreason: %v\n", certificate.VerdictMalformed, err)
		return false
	}
	logged := "not logged (--require-log refuses reports without the log's evidence)"
	if index, ok := ReportLogIndex(data); ok {
		logged = fmt.Sprintf("transparency log index %d", index)
	}
	fmt.Fprintf(stdout, "verdict: valid\nreport: %s %s at %s, signed by a trusted key, %s\n", r.Kind, r.RunID, r.At.Format(time.RFC3339), logged)
	for _, l := range r.Layers {
		fmt.Fprintf(stdout, "  %s %s: found %d, done %d, residual %d", l.Store, l.Table, l.Found, l.Done, l.Residual)
		if l.Cutoff != nil {
			fmt.Fprintf(stdout, ", cutoff %s", l.Cutoff.Format(time.RFC3339))
		}
		fmt.Fprintln(stdout)
	}
	return true
}

// ReportLogIndex is where the transparency log holds a signed report's
// event; false when the report carries no log section.
func ReportLogIndex(signed []byte) (int64, bool) {
	var sr certificate.SignedReport
	if json.Unmarshal(signed, &sr) != nil || sr.Log == nil {
		return 0, false
	}
	return sr.Log.Index, true
}

// ReadAddenda reads each addendum file (ReadEvidence: at most one byte
// over a certificate's limit) for VerifyWithAddenda, named as given. Its
// error names the file that could not be read.
func ReadAddenda(files []string) ([]certificate.AddendumFile, error) {
	addenda := make([]certificate.AddendumFile, 0, len(files))
	for _, name := range files {
		data, err := ReadEvidence(name, nil)
		if err != nil {
			return nil, fmt.Errorf("reading the addendum %s: %w", name, err)
		}
		addenda = append(addenda, certificate.AddendumFile{Name: name, Data: data})
	}
	return addenda, nil
}
