package main

import (
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// forgetRunCmd is lethe-proxy forget run: adminclient.RunForget with the
// subject from stdin and the question put on the terminal.
func forgetRunCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("forget run", usageOf("forget"), stderr)
	clientFlags := adminclient.AddFlags(fs)
	yes := fs.Bool("yes", false, "confirm without asking (scripts)")
	nothingFound := fs.Bool("nothing-found", false, "with --yes, certify that nothing was found when the preview finds nothing")
	out := fs.String("out", "", "the certificate's file (default certificate-REQUEST_ID.json)")
	keys := fs.String("keys", "", "the operator's trusted keys file, to verify the certificate offline")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "forget run")
	if fs.NArg() > 0 {
		// Not quoted back: it may well be the subject.
		return fail(2, "takes no arguments; the subject is read from stdin, never from the command line")
	}
	if *nothingFound && !*yes {
		return fail(2, "--nothing-found goes with --yes; without --yes you are asked instead")
	}
	c, err := clientFlags.Client()
	if err != nil {
		return fail(2, "%v", err)
	}
	run := adminclient.ForgetRun{NothingFound: *nothingFound, Out: *out, KeysFile: *keys}
	if run.Subject, err = adminclient.ReadSubject(stdin); err != nil {
		return fail(2, "%v", err)
	}
	if !*yes {
		tty, err := adminclient.Terminal()
		if err != nil {
			return fail(2, "%v", err)
		}
		defer tty.Close()
		run.Ask = adminclient.AskOn(tty, tty)
	}
	ctx, stop := signalContext()
	defer stop()
	valid, err := c.RunForget(ctx, run, stdout, stderr)
	if err != nil {
		return fail(1, "%v", err)
	}
	if !valid {
		fmt.Fprintln(stderr, "lethe-proxy forget run: the certificate is NOT valid (see the verdict above)")
		return 1
	}
	return 0
}
