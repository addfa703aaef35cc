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
