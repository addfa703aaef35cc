package main

import (
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/replay"
)

// replayCmd is lethe-proxy replay: wiring only, the work is replay.Run's.
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
	if !*dryRun && cfg.Forget.SigningKey == "" {
		return fail(2, "a replay signs and logs a report per request, which needs forget configured: set forget.signing_key "+
			"(and forget.log_origin) as for forget (docs/forget.md), or pass --dry-run to count only")
	}
	if !cfg.HasRules() {
		return fail(2, "nothing to replay into: the config has no capture.tables and no pinecone.indexes[].namespaces")
	}
	log := cfg.Log.NewLogger(stderr)
	ctx, cancel := signalContext()
	defer cancel()
	job, err := forgetopen.OpenJob(cfg, *path, forgetopen.JobNeeds{HashesSubjects: true, LedgerLog: log})
	if err != nil {
		return fail(2, "%v", err)
	}
	defer job.Close()
	scanners, closeScanners, err := proxyopen.FromWings(ctx, cfg, log, connector.Wing.Scanners)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer closeScanners()
	layers, closeLayers, err := proxyopen.FromWings(ctx, cfg, log, proxyopen.ForgetLayers)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer closeLayers()
	if !*dryRun {
		if err := job.Sign(ctx, cfg, tool(), log); err != nil {
			return fail(2, "%v", err)
		}
	}
	rc := replay.Config{Ledger: job.Ledger, Hasher: job.Hasher, Scanners: scanners, Layers: layers, DryRun: *dryRun, Logger: log, Certifier: job.Certifier}
	res, runErr := replay.Run(ctx, rc)
	files, err := res.WriteReports(*reports)
	if err != nil {
		return fail(1, "%v", err)
	}
	if *format == "json" {
		res.WriteJSON(stdout, files)
	} else {
		res.WriteText(stdout, files)
	}
	if runErr != nil {
		return fail(2, "%v", runErr)
	}
	if !res.Clean() {
		return fail(1, "records of forgotten subjects are still present (see above); run lethe-proxy replay again")
	}
	if !*dryRun {
		// Every completed forget is re-applied to the stores as they are
		// now: the restores the proxies detected are answered.
		n, err := job.Ledger.ClearRestores(ctx)
		if err != nil {
			return fail(1, "the replay is done and logged, but the restore mark could not be cleared (run lethe-proxy replay again): %v", err)
		}
		if n > 0 {
			fmt.Fprintf(stdout, "restore cleared for %d store(s): the proxy relays writes again at its next check (capture.recovery_interval)\n", n)
		}
	}
	return 0
}
