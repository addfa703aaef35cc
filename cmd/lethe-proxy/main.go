// Command lethe-proxy is Lethe's transparent proxy in front of an
// application's vector stores. See README.md for the commands.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `lethe-proxy: provable deletion of a person's data from AI memory

Usage:
  lethe-proxy serve --config FILE   run the proxy
  lethe-proxy check --config FILE [--format text|github|json]
                                    check every vector table and namespace
                                    has a rule (exit 1 if not; docs/coverage.md)
  lethe-proxy ledger counts|subject --config FILE
                                    inspect the ledger (see lethe-proxy ledger)
  lethe-proxy forget preview|confirm|status|certificate|lift
                                    drive a forget through the admin API
                                    (see lethe-proxy forget)
  lethe-proxy wal status|drop --config FILE
                                    the WAL follower's replication slot
                                    (see lethe-proxy wal)
  lethe-proxy sweep --config FILE [--dry-run]
                                    delete records past their rule's retain
                                    and log a signed report (see lethe-proxy sweep -h)
  lethe-proxy reconcile --config FILE [--adopt] [--format text|json]
                                    find records the ledger does not know
                                    (see lethe-proxy reconcile --help)
  lethe-proxy log checkpoint|verify print or check the transparency log
                                    (see lethe-proxy log)
  lethe-proxy export --config FILE [--format markdown|json] [--out FILE | --check FILE]
                                    the data map: what each table and namespace
                                    holds and what forget does there
  lethe-proxy mcp [--http ADDR]     MCP tools for AI agents over the admin API
                                    (see lethe-proxy mcp -h; docs/mcp.md)
  lethe-proxy admin-token --name NAME --role operator|auditor
                                    make an admin API token
  lethe-proxy keygen --out FILE     make the certificate signing key
  lethe-proxy verify --keys KEYS.json [--now RFC3339] CERT.json
                                    verify a deletion certificate (or a
                                    sweep's signed report) offline
  lethe-proxy version               print the version (also --version)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its arguments, the process's streams, and
// the exit status it returns.
type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

var commands = map[string]command{
	"serve": serveCmd, "check": checkCmd, "ledger": ledgerCmd, "forget": forgetCmd, "wal": walCmd,
	"sweep": sweepCmd, "reconcile": reconcileCmd, "log": logCmd, "export": exportCmd,
	"admin-token": adminTokenCmd, "keygen": keygenCmd, "verify": verifyCmd,
	"mcp": mcpCmd,
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(args[1:], stdin, stdout, stderr)
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "lethe-proxy", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "lethe-proxy: unknown command %q\n\n%s", args[0], usage)
	return 2
}
