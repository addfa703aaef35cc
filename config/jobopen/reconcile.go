package jobopen

import (
	"context"
	"errors"
	"io"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/engine/reconcile"
)

// ReconcileRun is what lethe-proxy reconcile's flags ask of a run.
type ReconcileRun struct {
	// Adopt records the unknown records and signs and logs a report of
	// them, written to ReportFile (the report's default name when empty).
	Adopt      bool
	ReportFile string
	// JSON writes the outcome as JSON instead of text.
	JSON bool
	// Tool names the program in what it signs.
	Tool string
}

// Reconcile compares every table and namespace cfg names with the ledger
// (reconcile.Reconcile), adopts the unknown records when run.Adopt says
// so, and writes the outcome to stdout; clean is false when a store holds
// records the ledger does not know. The ledger's log goes to stderr.
func Reconcile(ctx context.Context, cfg *config.Config, configPath string, run ReconcileRun, stdout, stderr io.Writer) (clean bool, err error) {
	if run.Adopt && cfg.Forget.SigningKey == "" {
		return false, couldNotRun{errors.New("--adopt signs a report and logs it, which needs forget configured: set forget.signing_key (and forget.log_origin) as for forget (docs/forget.md)")}
	}
	if !cfg.HasRules() {
		return false, couldNotRun{errors.New("nothing to reconcile: the config has no capture.tables and no pinecone.indexes[].namespaces")}
	}
	log := cfg.Log.NewLogger(stderr)
	// --adopt writes subject hashes, so it records the salt as serve does;
	// it opens the ledger under a fresh owner name, as inspection commands do.
	job, scanners, done, err := openScanJob(ctx, cfg, configPath, forgetopen.JobNeeds{HashesSubjects: true, RecordSalt: run.Adopt, LedgerLog: log}, log)
	if err != nil {
		return false, err
	}
	defer done()
	if run.Adopt {
		if err := job.Sign(ctx, cfg, run.Tool, log); err != nil {
			return false, couldNotRun{err}
		}
	}
	rc := reconcile.Config{Ledger: job.Ledger, Hasher: job.Hasher, Scanners: scanners, Adopt: run.Adopt, Certifier: job.Certifier}
	out, signed, err := reconcile.Reconcile(ctx, rc)
	if err != nil {
		return false, couldNotRun{err}
	}
	if signed != nil {
		if err := out.WriteReport(run.ReportFile, signed); err != nil {
			return false, couldNotRun{err}
		}
	}
	if run.JSON {
		out.WriteJSON(stdout)
	} else {
		out.WriteText(stdout, run.Adopt)
	}
	return out.Clean(), nil
}
