package jobopen

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/engine/replay"
)

// ReplayRun is what lethe-proxy replay's flags ask of a run.
type ReplayRun struct {
	// DryRun finds and counts only.
	DryRun bool
	// Reports is the directory of the signed reports.
	Reports string
	// JSON writes the result as JSON instead of text.
	JSON bool
	// Tool names the program in what it signs.
	Tool string
}

// Replay finds, after a restore, the records of completed forgets that
// came back and forgets them again (replay.Run), writes the signed reports
// and the result to stdout, and, unless run.DryRun, clears the restore
// mark the proxies hold writes on; clean is false, with an error, when
// records of forgotten subjects are still present.
func Replay(ctx context.Context, cfg *config.Config, configPath string, run ReplayRun, stdout, stderr io.Writer) (clean bool, err error) {
	if !run.DryRun && cfg.Forget.SigningKey == "" {
		return false, couldNotRun{errors.New("a replay signs and logs a report per request, which needs forget configured: set forget.signing_key " +
			"(and forget.log_origin) as for forget (docs/forget.md), or pass --dry-run to count only")}
	}
	if !cfg.HasRules() {
		return false, couldNotRun{errors.New("nothing to replay into: the config has no capture.tables and no pinecone.indexes[].namespaces")}
	}
	log := cfg.Log.NewLogger(stderr)
	job, scanners, done, err := openScanJob(ctx, cfg, configPath, forgetopen.JobNeeds{HashesSubjects: true, LedgerLog: log}, log)
	if err != nil {
		return false, err
	}
	defer done()
	layers, closeLayers, err := proxyopen.FromWings(ctx, cfg, log, proxyopen.ForgetLayers)
	if err != nil {
		return false, couldNotRun{err}
	}
	defer closeLayers()
	if !run.DryRun {
		if err := job.Sign(ctx, cfg, run.Tool, log); err != nil {
			return false, couldNotRun{err}
		}
	}
	rc := replay.Config{Ledger: job.Ledger, Hasher: job.Hasher, Scanners: scanners, Layers: layers, DryRun: run.DryRun, Logger: log, Certifier: job.Certifier}
	res, runErr := replay.Run(ctx, rc)
	files, err := res.WriteReports(run.Reports)
	if err != nil {
		return false, err
	}
	if run.JSON {
		res.WriteJSON(stdout, files)
	} else {
		res.WriteText(stdout, files)
	}
	if runErr != nil {
		return false, couldNotRun{runErr}
	}
	if !res.Clean() {
		return false, errors.New("records of forgotten subjects are still present (see above); run lethe-proxy replay again")
	}
	if !run.DryRun {
		// Every completed forget is re-applied to the stores as they are
		// now: the restores the proxies detected are answered.
		n, err := job.Ledger.ClearRestores(ctx)
		if err != nil {
			return false, fmt.Errorf("the replay is done and logged, but the restore mark could not be cleared (run lethe-proxy replay again): %w", err)
		}
		if n > 0 {
			fmt.Fprintf(stdout, "restore cleared for %d store(s): the proxy relays writes again at its next check (capture.recovery_interval)\n", n)
		}
	}
	return true, nil
}
