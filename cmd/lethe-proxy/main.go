// Command lethe-proxy is Lethe's transparent proxy in front of an
// application's vector stores. See README.md for the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its arguments, the process's streams, and
// the exit status it returns.
type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands are the subcommands by name; usage/NAME.txt is each one's
// usage, which --help prints.
var commands = map[string]command{
	"serve": serveCmd, "check": checkCmd, "ledger": ledgerCmd, "forget": forgetCmd, "wal": walCmd,
	"sweep": sweepCmd, "reconcile": reconcileCmd, "log": logCmd, "export": exportCmd,
	"admin-token": adminTokenCmd, "keygen": keygenCmd, "verify": verifyCmd, "mcp": mcpCmd,
	"demo": demoCmd, "replay": replayCmd,
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if cmd, ok := commands[args[0]]; ok {
		if asksHelp(args[1:]) {
			fmt.Fprint(stdout, usageOf(args[0]))
			return 0
		}
		return cmd(args[1:], stdin, stdout, stderr)
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "lethe-proxy", version)
		return 0
	case "help", "--help", "-help", "-h":
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				fmt.Fprint(stdout, usageOf(args[1]))
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

// signalContext ends at SIGINT or SIGTERM: a long scan stops cleanly (its
// transaction rolled back) and a server shuts down gracefully. Its cancel
// function restores the default handling, so that a second signal kills
// the process.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}
