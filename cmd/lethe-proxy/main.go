// Command lethe-proxy is Lethe's transparent proxy in front of an
// application's vector stores. See README.md for the commands.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `lethe-proxy: provable deletion of a person's data from AI memory

Usage:
  lethe-proxy demo [--run | --clean] [--dir DIR]
                                    the whole product on an embedded default:
                                    the Pinecone emulator, sample memories,
                                    a forget (see lethe-proxy demo --help)
  lethe-proxy serve --config FILE   run the proxy
  lethe-proxy check --config FILE [--format text|github|json]
                                    check every vector table and namespace
                                    has a rule (exit 1 if not; docs/coverage.md)
  lethe-proxy ledger counts|subject --config FILE
                                    inspect the ledger (see lethe-proxy ledger)
  lethe-proxy forget run [--yes] [--out FILE] [--keys KEYS.json] < subject
                                    a forget in one step: preview, confirm,
                                    wait, write and verify the certificate
  lethe-proxy forget list [--status S] [--overdue]
                                    the forget requests by id: status, deadline,
                                    overdue (see lethe-proxy forget --help)
  lethe-proxy forget preview|confirm|status|certificate|reverify|lift
                                    each step on its own through the admin API
                                    (see lethe-proxy forget --help)
  lethe-proxy wal status|drop --config FILE
                                    the WAL follower's replication slot
                                    (see lethe-proxy wal)
  lethe-proxy sweep --config FILE [--dry-run]
                                    delete records past their rule's retain
                                    and log a signed report (see lethe-proxy sweep -h)
  lethe-proxy reconcile --config FILE [--adopt] [--format text|json]
                                    find records the ledger does not know
                                    (see lethe-proxy reconcile --help)
  lethe-proxy replay --config FILE [--dry-run]
                                    after a restore: delete again what completed
                                    forgets deleted, log a signed report each
                                    (see lethe-proxy replay --help)
  lethe-proxy log checkpoint|verify print or check the transparency log
                                    (see lethe-proxy log)
  lethe-proxy export --config FILE [--format markdown|json] [--out FILE | --check FILE]
                                    the data map: what each table and namespace
                                    holds and what forget does there
  lethe-proxy mcp [--http ADDR]     MCP tools for AI agents over the admin API
                                    (see lethe-proxy mcp -h; docs/mcp.md)
  lethe-proxy admin-token --name NAME --role operator|auditor [--tokens-file FILE]
                                    make an admin API token (and add it to the
                                    tokens file, which the proxy re-reads)
  lethe-proxy keygen --out FILE     make the certificate signing key
  lethe-proxy verify --keys KEYS.json [--now RFC3339] CERT.json
                                    verify a deletion certificate (or a
                                    sweep's signed report) offline
  lethe-proxy version               print the version (also --version)
  lethe-proxy help [COMMAND]        this text, or a command's (also COMMAND --help)

Every command prints its usage with --help or -h.

Environment:
  LETHE_ADMIN_URL          the admin API of forget, log and mcp, unless --admin
                           (else forget.admin.listen of --config, else
                           ` + adminclient.DefaultURL + `)
  LETHE_ADMIN_TOKEN        the admin API bearer token, unless --token-file
  LETHE_SUBJECT_SALT       hex, at least 32 bytes: the salt of subject hashes
                           (serve and the commands that open the ledger)
  LETHE_SUBJECT_SALT_FILE  a file holding that salt, instead of the above
  LETHE_PINECONE_API_KEY   the Pinecone API key of an index without its own
                           api_key_env (serve, check, reconcile, sweep)
  LETHE_MCP_REF_KEY_FILE   mcp: the key file sealing subject references
  LETHE_DEMO_PINECONE_API_KEY  demo: its emulator's key, which the demo
                           sets for its own proxy (nothing to set)
  DATABASE_URL             demo: a PostgreSQL server with pgvector
                           (postgres://user:password@host:port/db) that the
                           demo also runs, on a table of its own
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its arguments, the process's streams, and
// the exit status it returns.
type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// subcommand is a command and its usage, which --help prints.
type subcommand struct {
	run   command
	usage string
}

var commands = map[string]subcommand{
	"serve": {serveCmd, serveUsage}, "check": {checkCmd, checkUsage}, "ledger": {ledgerCmd, ledgerUsage},
	"forget": {forgetCmd, forgetUsage}, "wal": {walCmd, walUsage}, "sweep": {sweepCmd, sweepUsage},
	"reconcile": {reconcileCmd, reconcileUsage}, "log": {logCmd, logUsage}, "export": {exportCmd, exportUsage},
	"admin-token": {adminTokenCmd, adminTokenUsage}, "keygen": {keygenCmd, keygenUsage},
	"verify": {verifyCmd, verifyUsage}, "mcp": {mcpCmd, mcpUsage}, "demo": {demoCmd, demoUsage},
	"replay": {replayCmd, replayUsage},
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if cmd, ok := commands[args[0]]; ok {
		if asksHelp(args[1:]) {
			fmt.Fprint(stdout, cmd.usage)
			return 0
		}
		return cmd.run(args[1:], stdin, stdout, stderr)
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "lethe-proxy", version)
		return 0
	case "help", "--help", "-help", "-h":
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				fmt.Fprint(stdout, cmd.usage)
				return 0
			}
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "lethe-proxy: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// asksHelp reports whether a command's arguments hold -h, -help or --help
// before any "--": wherever it stands, even after a sub-subcommand or in
// place of a required flag, the user gets the usage and exit status 0.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
