package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/engine/reconcile"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcwing"
)

const reconcileUsage = `Usage:
  lethe-proxy reconcile --config FILE [--adopt [--report FILE]] [--format text|json]

Reads every record of every configured table and Pinecone namespace and
counts, per table, the records whose subject the ledger does not know under
their id (written before Lethe, around a proxy while capture.wal was off,
or unattributed in permissive mode). It prints counts only, never ids or
subjects.

  --adopt        record the unknown records in the ledger, sign a report and
                 append a reconcile.adopted event to the transparency log
                 (needs forget.signing_key)
  --report FILE  where --adopt writes the signed report
                 (default reconcile-<run id>.json in the current directory)
  --format       text (default) or json

Exit status: 0 every record is known (or was adopted), 1 unknown records
were found and not adopted, or records name a subject already forgotten,
2 the config is invalid or a store or the ledger cannot be read.
`

// reconcileCmd is `lethe-proxy reconcile`: wiring only, the work is
// reconcile.Run's.
func reconcileCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reconcileUsage) }
	path := fs.String("config", "", "configuration file")
	adopt := fs.Bool("adopt", false, "record the unknown records in the ledger and log a signed report")
	reportFile := fs.String("report", "", "where --adopt writes the signed report")
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy reconcile: "+format+"\n", a...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q\n\n%s", fs.Arg(0), reconcileUsage)
	case *format != "text" && *format != "json":
		return fail("--format %q: give text or json", *format)
	case *reportFile != "" && !*adopt:
		return fail("--report names the file --adopt writes; add --adopt, or leave --report out")
	}
	cfg, ok := loadConfig("reconcile", *path, reconcileUsage, false, stderr)
	if !ok {
		return exitConfig
	}
	if *adopt && cfg.Forget.SigningKey == "" {
		return fail("--adopt signs a report and logs it, which needs forget configured: set forget.signing_key (and forget.log_origin) as for forget (docs/forget.md)")
	}
	log := newLogger(cfg.Log, stderr)
	ctx, cancel := signalContext()
	defer cancel()
	run, err := openReconcile(ctx, cfg, *path, *adopt, log)
	if err != nil {
		return fail("%v", err)
	}
	defer run.close()
	counts, err := reconcile.Run(ctx, reconcile.Config{Ledger: run.ledger, Hasher: run.hasher, Scanners: run.scanners, Adopt: *adopt})
	if err != nil {
		return fail("%v", err)
	}
	out := reconcileOutput{Tables: counts, ForgottenBy: []string{}}
	for _, c := range counts {
		out.Unknown += c.Unknown
		out.Adopted += c.Adopted
		out.Forgotten += c.Forgotten
		for _, id := range c.ForgottenBy {
			if !slices.Contains(out.ForgottenBy, id) {
				out.ForgottenBy = append(out.ForgottenBy, id)
			}
		}
	}
	slices.Sort(out.ForgottenBy)
	if out.Adopted > 0 {
		if out.Report, out.RunID, err = run.logReport(ctx, counts, *reportFile); err != nil {
			// The adopted records are in the ledger; a second run finds
			// them known and has nothing to report.
			return fail("the records were adopted, but their report was not: %v", err)
		}
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		out.text(stdout, *adopt)
	}
	if out.Unknown > out.Adopted || out.Forgotten > 0 {
		return 1
	}
	return 0
}

// signalContext is cancelled by an interrupt, so that a long scan stops
// cleanly (its transaction rolled back).
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

// reconcileRun is what one reconcile reads and writes: the ledger, the
// stores' scanners and, with --adopt, the certifier that signs and logs.
type reconcileRun struct {
	ledger    reconcile.Ledger
	hasher    *ledger.Hasher
	scanners  []connector.Scanner
	certifier *engine.Certifier
	closers   []func()
}

func (r *reconcileRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// openReconcile opens the ledger (under a fresh owner name, as inspection
// commands do), the store of capture.tables and the Pinecone index hosts,
// and with adopt the engine.
func openReconcile(ctx context.Context, cfg *config.Config, configPath string, adopt bool, log *slog.Logger) (_ *reconcileRun, err error) {
	run := &reconcileRun{}
	defer func() {
		if err != nil {
			run.close()
		}
	}()
	if !cfg.HasRules() {
		return nil, errors.New("nothing to reconcile: the config has no capture.tables and no pinecone.indexes[].namespaces")
	}
	if run.hasher, err = subjectHasher(); err != nil {
		return nil, err
	}
	// --adopt writes subject hashes, so it records the salt as serve does.
	l, where, err := openLedgerWith(cfg.Capture.Ledger, configPath, ledger.Options{Logger: log}, ledgerSalt{hasher: run.hasher, record: adopt})
	if err != nil {
		return nil, fmt.Errorf("opening the ledger %s: %w", where, err)
	}
	run.closers = append(run.closers, func() { l.Close() })
	run.ledger = l
	pg, err := pgwing.New(cfg, nil, nil, log)
	if err != nil {
		return nil, err
	}
	if pg != nil {
		scanners, closeScanners, err := pg.Scanners(ctx)
		if err != nil {
			return nil, err
		}
		run.closers = append(run.closers, closeScanners)
		run.scanners = append(run.scanners, scanners...)
	}
	if pc := pcwing.New(cfg, nil, log); pc != nil {
		scanners, closeScanners, err := pc.Scanners(ctx)
		if err != nil {
			return nil, err
		}
		run.closers = append(run.closers, closeScanners)
		run.scanners = append(run.scanners, scanners...)
	}
	if adopt {
		if run.certifier, _, err = announcedCertifier(ctx, cfg, l, log); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// logReport signs the adoption's report, logs its event and writes it to
// file (default reconcile-<run id>.json here); it returns the file and the
// run id.
func (r *reconcileRun) logReport(ctx context.Context, counts []reconcile.Count, file string) (string, string, error) {
	now := time.Now()
	id := engine.NewRunID("reconcile", now)
	signed, err := r.certifier.LogReport(ctx, reconcile.Report(id, now, counts))
	if err != nil {
		return "", id, err
	}
	if file, err = writeReport(file, id, signed); err != nil {
		return "", id, fmt.Errorf("writing the report (its event is in the log as run %s): %w", id, err)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return file, id, nil
}

// reconcileOutput is what reconcile prints: counts only.
type reconcileOutput struct {
	Tables      []reconcile.Count `json:"tables"`
	Unknown     int64             `json:"unknown"`
	Adopted     int64             `json:"adopted"`
	Forgotten   int64             `json:"forgotten"`
	ForgottenBy []string          `json:"forgotten_by"` // forget request ids
	RunID       string            `json:"run_id,omitempty"`
	Report      string            `json:"report,omitempty"`
}

func (o reconcileOutput) text(w io.Writer, adopt bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tTABLE\tSCANNED\tKNOWN\tUNKNOWN\tUNREADABLE\tFORGOTTEN\tADOPTED")
	var absent []string
	for _, c := range o.Tables {
		if c.Absent {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\n", c.Store, c.Table)
			absent = append(absent, c.Table)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Store, c.Table, c.Scanned, c.Known, c.Unknown, c.Unreadable, c.Forgotten, c.Adopted)
	}
	tw.Flush()
	for _, t := range absent {
		fmt.Fprintf(w, "%s does not exist (yet): it holds nothing\n", t)
	}
	if o.Forgotten > 0 {
		fmt.Fprintf(w, "%d records name a subject already forgotten, written after the forget where nothing caught them; "+
			"they are not adopted: forget the subject of request %s again to delete them and certify it (docs/reconcile.md)\n",
			o.Forgotten, strings.Join(o.ForgottenBy, ", "))
	}
	switch {
	case o.Unknown == 0 && o.Forgotten == 0:
		fmt.Fprintln(w, "every record is known to the ledger")
	case o.Unknown > 0 && o.Adopted == o.Unknown:
		fmt.Fprintf(w, "adopted %d records into the ledger; signed report (run %s) written to %s and its reconcile.adopted event appended to the transparency log\n", o.Adopted, o.RunID, o.Report)
	case o.Unknown > 0 && !adopt:
		fmt.Fprintf(w, "%d records name a subject the ledger does not know under their id; run again with --adopt to record them (docs/reconcile.md)\n", o.Unknown)
	}
}
