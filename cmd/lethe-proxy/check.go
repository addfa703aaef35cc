package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcwing"
)

const checkUsage = `Usage:
  lethe-proxy check --config FILE [--format text|github|json]

Checks that every table with a vector, halfvec or sparsevec column or a
column named like a subject (coverage.subject_columns), and every namespace
of a configured Pinecone index, has a capture rule or a coverage.ignore with
a reason, and that the rules match the database. Reads the catalog through
capture.store (never a row) and the indexes' stats. Exit status: 0 clean
(warnings allowed), 1 problems found, 2 config invalid or cannot connect.
See docs/coverage.md.
`

// checkTimeout bounds the whole check: connecting, reading the catalog,
// asking each index.
const checkTimeout = 2 * time.Minute

func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage) }
	path := fs.String("config", "", "configuration file")
	format := fs.String("format", coverage.FormatText, "output format: "+strings.Join(coverage.Formats, ", "))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lethe-proxy check: unexpected argument %q\n\n%s", fs.Arg(0), checkUsage)
		return 2
	}
	if !slices.Contains(coverage.Formats, *format) {
		fmt.Fprintf(stderr, "lethe-proxy check: --format %q: use one of %s\n", *format, strings.Join(coverage.Formats, ", "))
		return 2
	}
	cfg, ok := loadConfig("check", *path, checkUsage, false, stderr)
	if !ok {
		return exitConfig
	}
	policy := cfg.Compiled().Coverage
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	var report coverage.Report
	if err := checkPostgres(ctx, cfg, policy, &report); err != nil {
		fmt.Fprintln(stderr, "lethe-proxy check:", err)
		return 2
	}
	if err := checkPinecone(ctx, cfg, policy, &report); err != nil {
		fmt.Fprintln(stderr, "lethe-proxy check:", err)
		return 2
	}
	if err := coverage.Write(stdout, *format, report); err != nil {
		fmt.Fprintln(stderr, "lethe-proxy check:", err)
		return 2
	}
	if report.Errors() > 0 {
		return 1
	}
	return 0
}

// checkPostgres judges the tables of the database capture.store names.
func checkPostgres(ctx context.Context, cfg *config.Config, p coverage.Policy, r *coverage.Report) error {
	w, err := pgwing.New(cfg, nil, nil, nil)
	if err != nil || w == nil { // nil: Pinecone alone
		return err
	}
	found, err := w.Coverage(ctx, p)
	if err != nil {
		return err
	}
	r.TablesChecked += found.TablesChecked
	r.Findings = append(r.Findings, found.Findings...)
	return nil
}

// checkPinecone judges the namespaces each configured index reports.
func checkPinecone(ctx context.Context, cfg *config.Config, p coverage.Policy, r *coverage.Report) error {
	w := pcwing.New(cfg, nil, nil)
	if w == nil {
		return nil
	}
	defer w.Close()
	found, err := w.Coverage(ctx, p)
	if err != nil {
		return err
	}
	r.NamespacesChecked += found.NamespacesChecked
	r.Findings = append(r.Findings, found.Findings...)
	return nil
}
