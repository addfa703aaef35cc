package main

import (
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/config"
)

// exitConfig is the exit status of every subcommand whose configuration
// is missing, cannot be read or is invalid: the same as for a wrong flag,
// since nothing was tried.
const exitConfig = 2

// loadConfig is the --config preamble of every subcommand that reads the
// configuration (serve, check, ledger, wal, sweep, reconcile, export). No
// --config prints "lethe-proxy CMD: --config FILE is required" and usage;
// a file that cannot be read or is invalid prints the error alone (it
// names the file, the line and the fix), without usage. Either way the
// caller exits exitConfig, which ok false says. offline skips opening the
// files the configuration names (config.LoadOffline), for commands that
// use the rules alone.
func loadConfig(cmd, path, usage string, offline bool, stderr io.Writer) (cfg *config.Config, ok bool) {
	if path == "" {
		fmt.Fprintf(stderr, "lethe-proxy %s: --config FILE is required\n\n%s", cmd, usage)
		return nil, false
	}
	load := config.Load
	if offline {
		load = config.LoadOffline
	}
	cfg, err := load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, false
	}
	return cfg, true
}
