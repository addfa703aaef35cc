package jobopen

import (
	"context"
	"log/slog"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/connector"
)

// openScanJob opens what reconcile and replay read first: the ledger as
// needs says (forgetopen.OpenJob), then every wing's scanners. done closes
// the stores, then the ledger; on an error, which CouldNotRun reports,
// nothing is left open.
func openScanJob(ctx context.Context, cfg *config.Config, configPath string, needs forgetopen.JobNeeds, log *slog.Logger) (_ *forgetopen.Job, _ []connector.Scanner, done func(), _ error) {
	job, err := forgetopen.OpenJob(cfg, configPath, needs)
	if err != nil {
		return nil, nil, nil, couldNotRun{err}
	}
	scanners, closeStores, err := proxyopen.FromWings(ctx, cfg, log, connector.Wing.Scanners)
	if err != nil {
		job.Close()
		return nil, nil, nil, couldNotRun{err}
	}
	return job, scanners, func() { closeStores(); job.Close() }, nil
}
