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
  lethe-proxy ledger counts|subject --config FILE
                                    inspect the ledger (see lethe-proxy ledger)
  lethe-proxy version               print the version (also --version)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "ledger":
		return ledgerCmd(args[1:], stdin, stdout, stderr)
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
