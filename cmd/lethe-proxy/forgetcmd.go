package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
)

const adminTokenUsage = `Usage:
  lethe-proxy admin-token --name NAME --role operator|auditor [--tokens-file FILE]
      prints a new admin API token on stdout. With --tokens-file, adds its
      entry (the token's SHA-256, never the token) to FILE, creating it with
      mode 0600 if missing; a running proxy whose forget.admin.tokens_file
      is FILE accepts the token at once, with no restart. Without it,
      prints the entry on stderr, to add to the tokens file by hand
`

// adminTokenCmd makes a bearer token for the admin API.
func adminTokenCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("admin-token", adminTokenUsage, stderr)
	name := fs.String("name", "", "who holds the token (appears in the access log)")
	role := fs.String("role", "", "operator (everything) or auditor (read, verify, log)")
	tokensFile := fs.String("tokens-file", "", "add the token's entry to this tokens file (created 0600 if missing)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *name == "" || *role == "" || fs.NArg() > 0 {
		fmt.Fprint(stderr, "lethe-proxy admin-token: --name and --role are required\n\n"+adminTokenUsage)
		return 2
	}
	secret, entry, err := admin.NewToken(*name, admin.Role(*role))
	if err != nil {
		fmt.Fprintln(stderr, "lethe-proxy admin-token:", err)
		return 2
	}
	if *tokensFile != "" {
		if err := admin.AppendToken(*tokensFile, entry); err != nil {
			fmt.Fprintln(stderr, "lethe-proxy admin-token:", err)
			return 1
		}
		fmt.Fprintln(stdout, secret)
		fmt.Fprintf(stderr, "Added %s (%s) to %s; a running proxy accepts the token at its next request.\n"+
			"The token above is shown once; give it to %s (as LETHE_ADMIN_TOKEN or a --token-file).\n", *name, *role, *tokensFile, *name)
		return 0
	}
	b, _ := json.Marshal(entry) // plain strings: cannot fail
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "Add this entry to the \"tokens\" list of the admin tokens file (or pass --tokens-file FILE next time):\n%s\n"+
		"The token above is shown once; give it to %s (as LETHE_ADMIN_TOKEN or a --token-file).\n", b, *name)
	return 0
}

const forgetUsage = `Usage (the subject is read from stdin, first line; never from a flag):
  lethe-proxy forget run [--yes [--nothing-found]] [--out FILE] [--keys KEYS.json] [client flags] < subject
      a forget in one step: shows what a preview found (and a warning when
      it found nothing), asks on the terminal (--yes: does not ask), starts
      the forget, shows each layer's progress until it ends, writes the
      certificate to FILE (default certificate-REQUEST_ID.json) and verifies
      it, offline against KEYS.json if given, else by the proxy. Prints
      the request id and the subject's secret; exits 0 only for a valid
      certificate. --nothing-found lets --yes certify that nothing was found
  lethe-proxy forget list [--status received|completed|failed] [--overdue]
                     [--limit N] [--json] [client flags]
      the forget requests, newest first, by id (never by subject): status,
      deadline and whether it has passed while the request is open; at
      most N (default 100, at most 1000)
  lethe-proxy forget preview  [client flags]               < subject
      what a forget would delete, and the confirm token
  lethe-proxy forget confirm  --token CONFIRM_TOKEN [--nothing-found] [client flags] < subject
      start the forget; prints the request id and the subject's secret.
      A preview that found nothing (nothing_found: true) is confirmed only
      with --nothing-found: the certificate then says nothing was found
  lethe-proxy forget status ID [--wait] [client flags]
      where the request stands; --wait shows each layer's progress until it
      ends (exit 0 if completed, 1 if failed)
  lethe-proxy forget certificate ID [--out FILE] [client flags]
  lethe-proxy forget reverify ID [client flags]            < subject
      check again that a completed forget's subject is absent (logged)
  lethe-proxy forget lift [client flags]                   < subject
      accept writes about the subject again

Client flags:
  --admin URL        admin API (default $LETHE_ADMIN_URL, else forget.admin
                     of --config, else ` + adminclient.DefaultURL + `)
  --config FILE      the proxy's configuration, read for forget.admin only
  --token-file FILE  file holding the bearer token (default $LETHE_ADMIN_TOKEN)
`

// forgetCmd drives a forget through the admin API.
func forgetCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, forgetUsage)
		return 2
	}
	sub := args[0]
	switch sub {
	case "run":
		return forgetRunCmd(args[1:], stdin, stdout, stderr)
	case "list":
		return forgetListCmd(args[1:], stdout, stderr)
	}
	fs := newFlagSet("forget "+sub, forgetUsage, stderr)
	client := adminClientFlags(fs)
	var confirmToken, out *string
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
	case "reverify":
		wantArgs = 1
	case "certificate":
		wantArgs = 1
		out = fs.String("out", "", "write the certificate to FILE instead of stdout")
	default:
		fmt.Fprintf(stderr, "lethe-proxy forget: unknown subcommand %q\n\n%s", sub, forgetUsage)
		return 2
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
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
			fmt.Fprint(stderr, "lethe-proxy forget confirm: --token CONFIRM_TOKEN is required; run `lethe-proxy forget preview` first and pass its confirm_token\n")
			return 2
		}
	}
	c, err := client()
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
		return 2
	}
	if wantArgs == 1 {
		call.ID = pos[0]
	}
	if adminclient.TakesSubject(sub) {
		if call.Subject, err = adminclient.ReadSubject(stdin); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
			return 2
		}
	}
	if wait != nil && *wait {
		return waitForget(c, call.ID, stdout, stderr)
	}
	body, err := c.Do(context.Background(), sub, call)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
		return 1
	}
	switch {
	case sub == "certificate" && *out != "":
		// Byte for byte: the signature covers what the server sent.
		if err := os.WriteFile(*out, body, 0o644); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget certificate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "certificate of request %s written to %s\n", call.ID, *out)
	case sub == "certificate":
		stdout.Write(body)
	default:
		adminclient.PrintAnswer(sub, body, stdout, stderr)
	}
	return 0
}
