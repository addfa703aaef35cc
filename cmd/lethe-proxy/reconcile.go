package main

import (
	"io"

	"github.com/lethe-privacy/lethe/config/jobopen"
)

// reconcileCmd is `lethe-proxy reconcile`: flags, then jobopen.Reconcile.
func reconcileCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("reconcile", usageOf("reconcile"), stderr)
	path := fs.String("config", "", "configuration file")
	adopt := fs.Bool("adopt", false, "record the unknown records in the ledger and log a signed report")
	reportFile := fs.String("report", "", "where --adopt writes the signed report")
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "reconcile")
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected argument %q\n\n%s", fs.Arg(0), usageOf("reconcile"))
	case *format != "text" && *format != "json":
		return fail(2, "--format %q: give text or json", *format)
	case *reportFile != "" && !*adopt:
		return fail(2, "--report names the file --adopt writes; add --adopt, or leave --report out")
	}
	cfg, ok := loadConfig("reconcile", *path, usageOf("reconcile"), false, stderr)
	if !ok {
		return exitConfig
	}
	ctx, cancel := signalContext()
	defer cancel()
	run := jobopen.ReconcileRun{Adopt: *adopt, ReportFile: *reportFile, JSON: *format == "json", Tool: tool()}
	clean, err := jobopen.Reconcile(ctx, cfg, *path, run, stdout, stderr)
	return exitOf(fail, clean, err)
}
