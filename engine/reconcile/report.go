package reconcile

import (
	"context"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
)

// LogAdoption has certifier sign the report of an adoption made at now
// and append its event (reconcile.adopted) to the transparency log; it
// returns the run's id (also on error, for the message) and the signed
// report with the log's proof.
func LogAdoption(ctx context.Context, certifier *engine.Certifier, counts []Count, now time.Time) (runID string, signed []byte, err error) {
	runID = engine.NewRunID("reconcile", now)
	signed, err = certifier.LogReport(ctx, Report(runID, now, counts))
	return runID, signed, err
}

// Report is the signed report of an adoption: per table, the
// unknown records found and those adopted, and how they were read.
func Report(runID string, at time.Time, counts []Count) certificate.Report {
	r := certificate.Report{Kind: certificate.EventReconcileAdopted, RunID: runID, At: at}
	for _, c := range counts {
		r.Layers = append(r.Layers, certificate.ReportLayer{
			Store: string(c.Store), Table: c.Table, Found: c.Unknown, Done: c.Adopted, Method: c.Method,
		})
	}
	return r
}
