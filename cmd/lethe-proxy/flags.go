package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/config/jobopen"
)

// newFlagSet is a subcommand's flag set: its errors go to stderr and,
// when usage is given, -h prints usage there.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if usage != "" {
		fs.Usage = func() { fmt.Fprint(stderr, usage) }
	}
	return fs
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// failer is a subcommand's way to stop: it prints "lethe-proxy CMD: " and
// the message on stderr and returns the exit status it is given.
func failer(stderr io.Writer, cmd string) func(code int, format string, a ...any) int {
	return func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy "+cmd+": "+format+"\n", a...)
		return code
	}
}

// exitOf is a command's exit status from its outcome: 2 with the error
// when the run could not start (jobopen.CouldNotRun), 1 with the error for
// any other, 1 when ok is false (what is wrong was written), else 0.
func exitOf(fail func(code int, format string, a ...any) int, ok bool, err error) int {
	switch {
	case jobopen.CouldNotRun(err):
		return fail(2, "%v", err)
	case err != nil:
		return fail(1, "%v", err)
	case !ok:
		return 1
	}
	return 0
}
