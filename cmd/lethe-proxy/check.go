package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config/proxyopen"
)

// checkTimeout bounds the whole check: connecting, reading the catalog,
// asking each index.
const checkTimeout = 2 * time.Minute

func checkCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", usageOf("check"), stderr)
	path := fs.String("config", "", "configuration file")
	format := fs.String("format", coverage.FormatText, "output format: "+strings.Join(coverage.Formats, ", "))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "check")
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lethe-proxy check: unexpected argument %q\n\n%s", fs.Arg(0), usageOf("check"))
		return 2
	}
	if !slices.Contains(coverage.Formats, *format) {
		return fail(2, "--format %q: use one of %s", *format, strings.Join(coverage.Formats, ", "))
	}
	cfg, ok := loadConfig("check", *path, usageOf("check"), false, stderr)
	if !ok {
		return exitConfig
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	report, failed, err := proxyopen.Coverage(ctx, cfg)
	if err != nil {
		return fail(2, "%v", err)
	}
	for _, err := range failed {
		fmt.Fprintln(stderr, "lethe-proxy check:", err)
	}
	if err := coverage.Write(stdout, *format, report); err != nil {
		return fail(2, "%v", err)
	}
	switch {
	case len(report.Unchecked) > 0:
		return fail(2, "not checked: %s (see above); the report covers the other stores", strings.Join(report.Unchecked, ", "))
	case report.Errors() > 0:
		return 1
	}
	return 0
}
