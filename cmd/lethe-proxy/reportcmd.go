package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
)

// verifyReport is `lethe-proxy verify` for a signed report: it checks the
// signature, the date and the log proof under policy
// (certificate.VerifyReportWith) and prints what the report says, layer by
// layer. Exit 0 when genuine; otherwise it prints the verdict, named as
// node/verify.mjs names it.
func verifyReport(data []byte, keys certificate.KeySet, policy certificate.ReportPolicy, stdout io.Writer) int {
	r, err := certificate.VerifyReportWith(data, keys, policy)
	if re := (*certificate.ReportError)(nil); errors.As(err, &re) {
		fmt.Fprintf(stdout, "verdict: %s\nreason: %s\n", re.Verdict, re.Reason)
		return 1
	} else if err != nil {
		fmt.Fprintf(stdout, "verdict: %s\nreason: %v\n", certificate.VerdictMalformed, err)
		return 1
	}
	logged := "not logged (--require-log refuses reports without the log's evidence)"
	if index, ok := reportLogIndex(data); ok {
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
	return 0
}

// writeReport writes a signed report to file, by default <run id>.json
// in the current directory, and returns the file it wrote.
func writeReport(file, runID string, signed []byte) (string, error) {
	if file == "" {
		file = runID + ".json"
	}
	return file, writeFileAtomic(file, signed)
}

// reportLogIndex is where the log holds a signed report's event.
func reportLogIndex(signed []byte) (int64, bool) {
	var sr certificate.SignedReport
	if json.Unmarshal(signed, &sr) != nil || sr.Log == nil {
		return 0, false
	}
	return sr.Log.Index, true
}
