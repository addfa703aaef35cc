package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// adminTokenCmd makes a bearer token for the admin API.
func adminTokenCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("admin-token", usageOf("admin-token"), stderr)
	name := fs.String("name", "", "who holds the token (appears in the access log)")
	role := fs.String("role", "", "operator (everything) or auditor (read, verify, log)")
	tokensFile := fs.String("tokens-file", "", "add the token's entry to this tokens file (created 0600 if missing)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "admin-token")
	if *name == "" || *role == "" || fs.NArg() > 0 {
		fmt.Fprint(stderr, "lethe-proxy admin-token: --name and --role are required\n\n"+usageOf("admin-token"))
		return 2
	}
	secret, entry, err := admin.NewToken(*name, admin.Role(*role))
	if err != nil {
		return fail(2, "%v", err)
	}
	if *tokensFile != "" {
		if err := admin.AppendToken(*tokensFile, entry); err != nil {
			return fail(1, "%v", err)
		}
	}
	admin.WriteNewToken(stdout, stderr, secret, entry, *tokensFile)
	return 0
}

// forgetCmd drives a forget through the admin API.
func forgetCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageOf("forget"))
		return 2
	}
	sub := args[0]
	switch sub {
	case "run":
		return forgetRunCmd(args[1:], stdin, stdout, stderr)
	case "list":
		return forgetListCmd(args[1:], stdout, stderr)
	}
	fs := newFlagSet("forget "+sub, usageOf("forget"), stderr)
	clientFlags := adminclient.AddFlags(fs)
	var confirmToken, out, addendaDir *string
	var nothingFound, wait *bool
	wantArgs := 0
	switch sub {
	case "preview", "lift":
	case "confirm":
		confirmToken = fs.String("token", "", "the confirm_token printed by preview")
		nothingFound = fs.Bool("nothing-found", false, "confirm a preview that found no record of the subject (its certificate says nothing was found)")
	case "status":
		wantArgs = 1
		wait = fs.Bool("wait", false, "show each layer's progress until the forget ends")
		addendaDir = fs.String("addenda", "", "also write the request's signed re-scan reports to DIR as addendum-LOGINDEX.json, for lethe-proxy verify --addendum")
	case "reverify":
		wantArgs = 1
	case "certificate":
		wantArgs = 1
		out = fs.String("out", "", "write the certificate to FILE instead of stdout")
	default:
		fmt.Fprintf(stderr, "lethe-proxy forget: unknown subcommand %q\n\n%s", sub, usageOf("forget"))
		return 2
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	fail := failer(stderr, "forget "+sub)
	if len(pos) != wantArgs {
		if wantArgs == 0 {
			// Not quoted back: it may well be the subject.
			fmt.Fprintf(stderr, "lethe-proxy forget %s takes no arguments; the subject is read from stdin, never from the command line\n", sub)
		} else {
			fmt.Fprintf(stderr, "lethe-proxy forget %s: give the request id: lethe-proxy forget %s ID\n", sub, sub)
		}
		return 2
	}
	call := adminclient.Forget{}
	if confirmToken != nil {
		if call.ConfirmToken, call.NothingFound = *confirmToken, *nothingFound; call.ConfirmToken == "" {
			return fail(2, "--token CONFIRM_TOKEN is required; run `lethe-proxy forget preview` first and pass its confirm_token")
		}
	}
	c, err := clientFlags.Client()
	if err != nil {
		return fail(2, "%v", err)
	}
	if wantArgs == 1 {
		call.ID = pos[0]
	}
	if adminclient.TakesSubject(sub) {
		if call.Subject, err = adminclient.ReadSubject(stdin); err != nil {
			return fail(2, "%v", err)
		}
	}
	if wait != nil && *wait { // each layer's progress on stderr until the forget ends, then its status
		ctx, stop := signalContext()
		defer stop()
		completed, err := c.WaitAndPrint(ctx, call.ID, stdout, stderr)
		return exitOf(fail, completed, err)
	}
	body, err := c.Do(context.Background(), sub, call)
	if err != nil {
		return fail(1, "%v", err)
	}
	if addendaDir != nil && *addendaDir != "" {
		files, err := adminclient.WriteAddenda(body, *addendaDir)
		if err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stderr, "%d addenda of request %s written to %s; verify them with the certificate: lethe-proxy verify --keys KEYS.json CERT.json --addendum FILE...\n", len(files), call.ID, *addendaDir)
	}
	if sub != "certificate" {
		adminclient.PrintAnswer(sub, body, stdout, stderr)
	} else if err := adminclient.WriteCertificate(call.ID, body, *out, stdout, stderr); err != nil {
		return fail(1, "%v", err)
	}
	return 0
}
