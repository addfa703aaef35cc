package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lethe-privacy/lethe/config/datamap"
)

const exportUsage = `Usage:
  lethe-proxy export --config FILE [--format markdown|json] [--out FILE]
  lethe-proxy export --config FILE --check FILE

The data map, from the configuration alone (no connection): per table and
Pinecone namespace what is stored, which field names the person, what forget
does there and how absence is verified, retention, and every coverage.ignore
with its reason (docs/export.md).

  --format markdown|json  the rendering (default markdown)
  --out FILE              write it to FILE instead of stdout
  --check FILE            render in FILE's format (.md or .json) and compare:
                          exit 0 the same, 1 different (a diff is printed)

Exit 2: the configuration is invalid, or a file cannot be read or written.
`

// exportCmd renders the data map of a configuration, or checks a committed
// copy of it.
func exportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage) }
	path := fs.String("config", "", "configuration file")
	format := fs.String("format", "", "markdown or json")
	out := fs.String("out", "", "write to this file")
	check := fs.String("check", "", "compare with this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy export: "+format+"\n", args...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q\n\n%s", fs.Arg(0), exportUsage)
	case *check != "" && (*out != "" || *format != ""):
		return fail("--check takes the format from the file's extension and writes nothing: leave out --out and --format")
	}
	if *check != "" {
		f, err := formatOf(*check)
		if err != nil {
			return fail("%v", err)
		}
		*format = f
	}
	if *format == "" {
		*format = "markdown"
	}
	if *format != "markdown" && *format != "json" {
		return fail("--format %q is not markdown or json", *format)
	}
	// The map needs the rules, not the keys and certificates the file
	// names: those exist on the proxy's host, not where CI runs export.
	cfg, ok := loadConfig("export", *path, exportUsage, true, stderr)
	if !ok {
		return exitConfig
	}
	m, err := datamap.Build(cfg)
	if err != nil {
		return fail("%v", err)
	}
	rendered := datamap.Markdown(m)
	if *format == "json" {
		rendered = datamap.JSON(m)
	}
	switch {
	case *check != "":
		return checkDataMap(*check, *path, *format, rendered, stdout, stderr)
	case *out != "":
		if err := os.WriteFile(*out, rendered, 0o644); err != nil {
			return fail("writing the data map: %v", err)
		}
		return 0
	}
	if _, err := stdout.Write(rendered); err != nil {
		return fail("writing the data map: %v", err)
	}
	return 0
}

// checkDataMap compares the committed file with the map rendered from the
// configuration: 0 the same, 1 different (the diff on stdout, the command
// that regenerates it on stderr), 2 unreadable.
func checkDataMap(file, configPath, format string, rendered []byte, stdout, stderr io.Writer) int {
	committed, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy export: --check: %v\n", err)
		return 2
	}
	if bytes.Equal(committed, rendered) {
		return 0
	}
	fmt.Fprint(stdout, datamap.Diff(file+" (committed)", file+" (from "+configPath+")", committed, rendered))
	regenerate := "lethe-proxy export --config " + configPath
	if format == "json" {
		regenerate += " --format json"
	}
	fmt.Fprintf(stderr, "lethe-proxy export: %s is out of date with %s: review the diff, then regenerate it with\n  %s --out %s\n",
		file, configPath, regenerate, file)
	return 1
}

// formatOf is the rendering a file's extension names.
func formatOf(file string) (string, error) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".md", ".markdown":
		return "markdown", nil
	case ".json":
		return "json", nil
	}
	return "", fmt.Errorf("--check %s: cannot tell the format from the extension (name the file .md or .json)", file)
}
