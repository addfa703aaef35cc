package main

import (
	"io"

	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/reconcile"
)

// reconcileCmd is `lethe-proxy reconcile`: wiring only, the work is
// reconcile.Reconcile's.
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
	if *adopt && cfg.Forget.SigningKey == "" {
		return fail(2, "--adopt signs a report and logs it, which needs forget configured: set forget.signing_key (and forget.log_origin) as for forget (docs/forget.md)")
	}
	if !cfg.HasRules() {
		return fail(2, "nothing to reconcile: the config has no capture.tables and no pinecone.indexes[].namespaces")
	}
	log := cfg.Log.NewLogger(stderr)
	ctx, cancel := signalContext()
	defer cancel()
	// --adopt writes subject hashes, so it records the salt as serve does;
	// it opens the ledger under a fresh owner name, as inspection commands do.
	job, err := forgetopen.OpenJob(cfg, *path, forgetopen.JobNeeds{HashesSubjects: true, RecordSalt: *adopt, LedgerLog: log})
	if err != nil {
		return fail(2, "%v", err)
	}
	defer job.Close()
	scanners, closeStores, err := proxyopen.FromWings(ctx, cfg, log, connector.Wing.Scanners)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer closeStores()
	if *adopt {
		if err := job.Sign(ctx, cfg, tool(), log); err != nil {
			return fail(2, "%v", err)
		}
	}
	rc := reconcile.Config{Ledger: job.Ledger, Hasher: job.Hasher, Scanners: scanners, Adopt: *adopt, Certifier: job.Certifier}
	out, signed, err := reconcile.Reconcile(ctx, rc)
	if err != nil {
		return fail(2, "%v", err)
	}
	if signed != nil {
		if err := out.WriteReport(*reportFile, signed); err != nil {
			return fail(2, "%v", err)
		}
	}
	if *format == "json" {
		out.WriteJSON(stdout)
	} else {
		out.WriteText(stdout, *adopt)
	}
	if !out.Clean() {
		return 1
	}
	return 0
}
