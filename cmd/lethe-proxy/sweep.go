package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/retention"
)

// sweepCmd runs one retention sweep (docs/retention.md).
func sweepCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", usageOf("sweep"), stderr)
	path := fs.String("config", "", "configuration file")
	dryRun := fs.Bool("dry-run", false, "count only")
	batch := fs.Int("batch", retention.DefaultBatch, "records per statement or delete request")
	reportFile := fs.String("report", "", "where to write the signed report (default sweep-RUN_ID.json)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "sweep")
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected argument %q\n\n%s", fs.Arg(0), usageOf("sweep"))
	case *batch < 1:
		return fail(2, "--batch %d: give at least 1", *batch)
	}
	cfg, ok := loadConfig("sweep", *path, usageOf("sweep"), false, stderr)
	if !ok {
		return exitConfig
	}
	if !*dryRun && cfg.Forget.SigningKey == "" {
		return fail(2, "the sweep signs its report with the forget key, and %s sets no forget.signing_key: "+
			"configure forget (lethe-proxy keygen), or pass --dry-run to count only", *path)
	}
	log := cfg.Log.NewLogger(stderr)
	ctx := context.Background()
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	layers, closeStores, err := proxyopen.FromWings(octx, cfg, log, connector.Wing.Retainers)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer closeStores()
	if len(layers) == 0 {
		fmt.Fprintf(stdout, "no table or namespace rule in %s has retain: nothing to sweep\n", *path)
		return 0
	}
	sc := retention.Config{Layers: layers, Batch: *batch, DryRun: *dryRun, Logger: log}
	if !*dryRun {
		// The sweep hashes nothing, but is refused a wrong salt.
		job, err := forgetopen.OpenJob(cfg, *path, forgetopen.JobNeeds{})
		if err != nil {
			return fail(2, "%v", err)
		}
		defer job.Close()
		if err := job.Sign(octx, cfg, tool(), log); err != nil {
			return fail(2, "%v", err)
		}
		sc.Ledger, sc.Certifier = job.Ledger, job.Certifier
	}
	res, err := retention.Sweep(ctx, sc)
	res.WriteText(stdout, *dryRun)
	if err != nil {
		return fail(1, "%v", err)
	}
	if !*dryRun {
		if err := res.WriteReport(*reportFile, stdout); err != nil {
			return fail(1, "%v", err)
		}
	}
	res.WriteWarnings(stderr, "lethe-proxy sweep: ")
	if !res.Clean() {
		return fail(1, "expired records are left or a table failed (see above); run the sweep again")
	}
	return 0
}
