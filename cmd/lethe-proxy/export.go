package main

import (
	"fmt"
	"io"
	"os"

	"github.com/lethe-privacy/lethe/config/datamap"
)

// exportCmd renders the data map of a configuration, or checks a committed
// copy of it.
func exportCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", usageOf("export"), stderr)
	path := fs.String("config", "", "configuration file")
	format := fs.String("format", "", "markdown or json")
	out := fs.String("out", "", "write to this file")
	check := fs.String("check", "", "compare with this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "export")
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected argument %q\n\n%s", fs.Arg(0), usageOf("export"))
	case *check != "" && (*out != "" || *format != ""):
		return fail(2, "--check takes the format from the file's extension and writes nothing: leave out --out and --format")
	}
	chosen, err := datamap.ChosenFormat(*format, *check)
	if err != nil {
		return fail(2, "%v", err)
	}
	// The map needs the rules, not the keys and certificates the file
	// names: those exist on the proxy's host, not where CI runs export.
	cfg, ok := loadConfig("export", *path, usageOf("export"), true, stderr)
	if !ok {
		return exitConfig
	}
	m, err := datamap.Build(cfg)
	if err != nil {
		return fail(2, "%v", err)
	}
	rendered := datamap.Render(m, chosen)
	switch {
	case *check != "":
		stale, err := datamap.Check(*check, *path, chosen, rendered)
		if err != nil {
			return fail(2, "--check: %v", err)
		}
		if stale != nil {
			fmt.Fprint(stdout, stale.Diff)
			fmt.Fprintf(stderr, "lethe-proxy export: %s is out of date with %s: review the diff, then regenerate it with\n  %s\n", *check, *path, stale.Regenerate)
			return 1
		}
		return 0
	case *out != "":
		if err := os.WriteFile(*out, rendered, 0o644); err != nil {
			return fail(2, "writing the data map: %v", err)
		}
		return 0
	}
	if _, err := stdout.Write(rendered); err != nil {
		return fail(2, "writing the data map: %v", err)
	}
	return 0
}
