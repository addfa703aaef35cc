package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
)

// Reconcile is Run summed into an Outcome (lethe-proxy reconcile) and,
// when records were adopted, their report signed by cfg.Certifier with its
// event (reconcile.adopted) appended to the transparency log: the signed
// report, with the log's proof, is returned for the caller to hand out,
// and the Outcome's RunID names it. When the report cannot be logged the
// adopted records stay in the ledger (a second run finds them known and
// has nothing to report), which the error says.
func Reconcile(ctx context.Context, cfg Config) (Outcome, []byte, error) {
	if cfg.Adopt && cfg.Certifier == nil {
		return Outcome{}, nil, errors.New("reconcile: adopting needs a Certifier to sign and log the report")
	}
	counts, err := Run(ctx, cfg)
	if err != nil {
		return Outcome{}, nil, err
	}
	out := Summarize(counts)
	if out.Adopted == 0 {
		return out, nil, nil
	}
	now := time.Now()
	if cfg.Now != nil {
		now = cfg.Now()
	}
	out.RunID = engine.NewRunID("reconcile", now)
	signed, err := cfg.Certifier.LogReport(ctx, Report(out.RunID, now, counts))
	if err != nil {
		return out, nil, fmt.Errorf("the records were adopted, but their report was not: %w", err)
	}
	return out, signed, nil
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
