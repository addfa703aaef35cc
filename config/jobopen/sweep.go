package jobopen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/retention"
)

// SweepRun is what lethe-proxy sweep's flags ask of a run.
type SweepRun struct {
	// DryRun counts only: nothing is deleted, signed or written.
	DryRun bool
	// Batch is the records per statement or delete request.
	Batch int
	// ReportFile is where the signed report goes (its default name when
	// empty).
	ReportFile string
	// Tool names the program in what it signs.
	Tool string
}

// openTimeout bounds opening the stores a sweep reads, and its key.
const openTimeout = 30 * time.Second

// Sweep deletes the records past their rule's retain in every store cfg
// names (retention.Sweep; docs/retention.md), signs and logs its report
// unless run.DryRun, and writes its table to stdout and its warnings to
// stderr; clean is false, with an error, when expired records are left.
func Sweep(ctx context.Context, cfg *config.Config, configPath string, run SweepRun, stdout, stderr io.Writer) (clean bool, err error) {
	if !run.DryRun && cfg.Forget.SigningKey == "" {
		return false, couldNotRun{fmt.Errorf("the sweep signs its report with the forget key, and %s sets no forget.signing_key: "+
			"configure forget (lethe-proxy keygen), or pass --dry-run to count only", configPath)}
	}
	log := cfg.Log.NewLogger(stderr)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	layers, closeStores, err := proxyopen.FromWings(octx, cfg, log, connector.Wing.Retainers)
	if err != nil {
		return false, couldNotRun{err}
	}
	defer closeStores()
	if len(layers) == 0 {
		fmt.Fprintf(stdout, "no table or namespace rule in %s has retain: nothing to sweep\n", configPath)
		return true, nil
	}
	sc := retention.Config{Layers: layers, Batch: run.Batch, DryRun: run.DryRun, Logger: log}
	if !run.DryRun {
		// The sweep hashes nothing, but is refused a wrong salt.
		job, err := forgetopen.OpenJob(cfg, configPath, forgetopen.JobNeeds{})
		if err != nil {
			return false, couldNotRun{err}
		}
		defer job.Close()
		if err := job.Sign(octx, cfg, run.Tool, log); err != nil {
			return false, couldNotRun{err}
		}
		sc.Ledger, sc.Certifier = job.Ledger, job.Certifier
	}
	res, err := retention.Sweep(ctx, sc)
	res.WriteText(stdout, run.DryRun)
	if err != nil {
		return false, err
	}
	if !run.DryRun {
		if err := res.WriteReport(run.ReportFile, stdout); err != nil {
			return false, err
		}
	}
	res.WriteWarnings(stderr, "lethe-proxy sweep: ")
	if !res.Clean() {
		return false, errors.New("expired records are left or a table failed (see above); run the sweep again")
	}
	return true, nil
}
