package main

import (
	"context"
	"io"

	"github.com/lethe-privacy/lethe/config/jobopen"
	"github.com/lethe-privacy/lethe/engine/retention"
)

// sweepCmd runs one retention sweep (docs/retention.md): flags, then
// jobopen.Sweep.
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
	run := jobopen.SweepRun{DryRun: *dryRun, Batch: *batch, ReportFile: *reportFile, Tool: tool()}
	clean, err := jobopen.Sweep(context.Background(), cfg, *path, run, stdout, stderr)
	return exitOf(fail, clean, err)
}
