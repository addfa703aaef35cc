package main

import (
	"io"

	"github.com/lethe-privacy/lethe/config/jobopen"
)

// replayCmd is lethe-proxy replay: flags, then jobopen.Replay.
func replayCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", usageOf("replay"), stderr)
	path := fs.String("config", "", "configuration file")
	dryRun := fs.Bool("dry-run", false, "find and count only")
	reports := fs.String("reports", "", "directory of the signed reports")
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "replay")
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected argument %q\n\n%s", fs.Arg(0), usageOf("replay"))
	case *format != "text" && *format != "json":
		return fail(2, "--format %q: give text or json", *format)
	}
	cfg, ok := loadConfig("replay", *path, usageOf("replay"), false, stderr)
	if !ok {
		return exitConfig
	}
	ctx, cancel := signalContext()
	defer cancel()
	run := jobopen.ReplayRun{DryRun: *dryRun, Reports: *reports, JSON: *format == "json", Tool: tool()}
	clean, err := jobopen.Replay(ctx, cfg, *path, run, stdout, stderr)
	return exitOf(fail, clean, err)
}
