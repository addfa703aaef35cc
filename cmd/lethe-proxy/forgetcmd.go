package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/admin"
)

const adminTokenUsage = `Usage:
  lethe-proxy admin-token --name NAME --role operator|auditor
      prints a new admin API token on stdout, and on stderr the entry to add
      to the server's tokens file (it holds only the token's SHA-256)
`

// adminTokenCmd makes a bearer token for the admin API.
func adminTokenCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admin-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, adminTokenUsage) }
	name := fs.String("name", "", "who holds the token (appears in the access log)")
	role := fs.String("role", "", "operator (everything) or auditor (read, verify, log)")
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
	b, _ := json.Marshal(entry) // plain strings: cannot fail
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "Add this entry to the \"tokens\" list of the admin tokens file, then restart the proxy:\n%s\n"+
		"The token above is shown once; give it to %s (as LETHE_ADMIN_TOKEN or a --token-file).\n", b, *name)
	return 0
}

const forgetUsage = `Usage (the subject is read from stdin, first line; never from a flag):
  lethe-proxy forget preview  [client flags]               < subject
      what a forget would delete, and the confirm token
  lethe-proxy forget confirm  --token CONFIRM_TOKEN [--nothing-found] [client flags] < subject
      start the forget; prints the request id and the subject's secret.
      A preview that found nothing (nothing_found: true) is confirmed only
      with --nothing-found: the certificate then says nothing was found
  lethe-proxy forget status ID [client flags]
  lethe-proxy forget certificate ID [--out FILE] [client flags]
  lethe-proxy forget reverify ID [client flags]            < subject
      check again that a completed forget's subject is absent (logged)
  lethe-proxy forget lift [client flags]                   < subject
      accept writes about the subject again

Client flags:
  --admin URL        admin API (default $LETHE_ADMIN_URL or ` + defaultAdminURL + `)
  --token-file FILE  file holding the bearer token (default $LETHE_ADMIN_TOKEN)
`

const defaultAdminURL = "http://" + admin.DefaultAddr

// forgetCmd drives a forget through the admin API.
func forgetCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, forgetUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("forget "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, forgetUsage) }
	client := adminClientFlags(fs)
	var confirmToken, out *string
	var nothingFound *bool
	wantArgs := 0
	switch sub {
	case "preview", "lift":
	case "confirm":
		confirmToken = fs.String("token", "", "the confirm_token printed by preview")
		nothingFound = fs.Bool("nothing-found", false, "confirm a preview that found no record of the subject (its certificate says nothing was found)")
	case "status", "reverify":
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
	if confirmToken != nil && *confirmToken == "" {
		fmt.Fprint(stderr, "lethe-proxy forget confirm: --token CONFIRM_TOKEN is required; run `lethe-proxy forget preview` first and pass its confirm_token\n")
		return 2
	}
	c, err := client()
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
		return 2
	}
	ctx := context.Background()

	var body []byte
	switch sub {
	case "preview", "confirm", "lift", "reverify":
		subject, err := subjectFromStdin(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
			return 2
		}
		switch sub {
		case "preview":
			body, err = c.call(ctx, http.MethodPost, "/v1/forget/preview", admin.SubjectRequest{Subject: subject})
		case "confirm":
			body, err = c.call(ctx, http.MethodPost, "/v1/forget", admin.ForgetRequest{Subject: subject, ConfirmToken: *confirmToken, NothingFound: *nothingFound})
		case "lift":
			body, err = c.call(ctx, http.MethodPost, "/v1/tombstones/lift", admin.SubjectRequest{Subject: subject})
		case "reverify":
			body, err = c.call(ctx, http.MethodPost, "/v1/forget/"+url.PathEscape(pos[0])+"/reverify", admin.SubjectRequest{Subject: subject})
		}
		if err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget %s: %v\n", sub, err)
			return 1
		}
	case "status":
		if body, err = c.call(ctx, http.MethodGet, "/v1/forget/"+url.PathEscape(pos[0]), nil); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget status: %v\n", err)
			return 1
		}
	case "certificate":
		if body, err = c.call(ctx, http.MethodGet, "/v1/forget/"+url.PathEscape(pos[0])+"/certificate", nil); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy forget certificate: %v\n", err)
			return 1
		}
		// Byte for byte: the signature covers what the server sent.
		if *out != "" {
			if err := os.WriteFile(*out, body, 0o644); err != nil {
				fmt.Fprintf(stderr, "lethe-proxy forget certificate: %v\n", err)
				return 1
			}
			fmt.Fprintf(stderr, "certificate of request %s written to %s\n", pos[0], *out)
			return 0
		}
		stdout.Write(body)
		return 0
	}
	printIndented(stdout, body)
	switch sub {
	case "preview":
		var pv struct {
			NothingFound bool   `json:"nothing_found"`
			Warning      string `json:"warning"`
		}
		if json.Unmarshal(body, &pv) == nil && pv.NothingFound {
			// The warning holds counts only, never the subject.
			fmt.Fprintf(stderr, "WARNING: %s\n", pv.Warning)
			fmt.Fprintln(stderr, "To certify that nothing was found, run `lethe-proxy forget confirm --token CONFIRM_TOKEN --nothing-found` with the same subject on stdin.")
			break
		}
		fmt.Fprintln(stderr, "To go ahead, run `lethe-proxy forget confirm --token CONFIRM_TOKEN` with the same subject on stdin.")
	case "confirm":
		fmt.Fprintln(stderr, "Give subject_secret to the data subject: it is not stored anywhere. Follow the request with `lethe-proxy forget status REQUEST_ID`.")
	}
	return 0
}

// subjectFromStdin reads the subject from stdin (subjectLine) and checks it
// as the admin API does. It is never echoed: it is personal data.
func subjectFromStdin(stdin io.Reader) (string, error) {
	subject, err := subjectLine(stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(subject) == "" {
		return "", errors.New("give the subject on stdin, e.g. `printf '%s\\n' \"$SUBJECT\" | lethe-proxy forget preview` (never as an argument: it would stay in shell history)")
	}
	if err := admin.CheckSubject(subject); err != nil {
		return "", err
	}
	return subject, nil
}

// subjectLine is the first line of stdin without its line ending (one \n
// or \r\n). Nothing else is trimmed: the subject is matched byte for byte.
func subjectLine(stdin io.Reader) (string, error) {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading the subject from stdin: %w", err)
	}
	line, _ = strings.CutSuffix(line, "\n")
	line, _ = strings.CutSuffix(line, "\r")
	return line, nil
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

func printIndented(w io.Writer, body []byte) {
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") != nil {
		w.Write(body)
		return
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

// adminClient calls the admin API with a bearer token.
type adminClient struct {
	base  string // scheme://host[:port], no trailing slash
	token string
	http  *http.Client
}

// adminClientFlags defines --admin and --token-file on fs; the returned
// function, called after parsing, builds the client.
func adminClientFlags(fs *flag.FlagSet) func() (*adminClient, error) {
	base := defaultAdminURL
	if v := os.Getenv("LETHE_ADMIN_URL"); v != "" {
		base = v
	}
	adminURL := fs.String("admin", base, "admin API URL (env LETHE_ADMIN_URL)")
	tokenFile := fs.String("token-file", "", "file holding the admin API bearer token (default: env LETHE_ADMIN_TOKEN)")
	return func() (*adminClient, error) {
		u, err := url.Parse(*adminURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--admin %q is not an http:// or https:// URL", *adminURL)
		}
		token := os.Getenv("LETHE_ADMIN_TOKEN")
		if *tokenFile != "" {
			b, err := os.ReadFile(*tokenFile)
			if err != nil {
				return nil, fmt.Errorf("reading --token-file: %w", err)
			}
			token = string(b)
		}
		token = strings.TrimSpace(token)
		if token == "" {
			return nil, errors.New("no admin API token: set LETHE_ADMIN_TOKEN or pass --token-file FILE (an operator creates tokens with `lethe-proxy admin-token`)")
		}
		return &adminClient{base: strings.TrimRight(*adminURL, "/"), token: token, http: &http.Client{Timeout: time.Minute}}, nil
	}
}

// adminAPIError is an error answer of the admin API.
type adminAPIError struct {
	status int
	body   admin.ErrorBody
}

func (e *adminAPIError) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d)", e.body.Error, e.status)
	if e.body.RequestID != "" {
		msg += "; existing request: " + e.body.RequestID
	}
	return msg
}

// call sends in (JSON, if not nil) and returns the body of a 2xx answer;
// any other answer is an *adminAPIError carrying the server's message.
func (c *adminClient) call(ctx context.Context, method, path string, in any) ([]byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the admin API at %s: %w (is the proxy running with the admin API on? set --admin or LETHE_ADMIN_URL)", c.base, err)
	}
	defer resp.Body.Close()
	// Certificates are the largest answers, at most 1 MiB.
	out, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the admin API's answer: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return out, nil
	}
	e := &adminAPIError{status: resp.StatusCode}
	if json.Unmarshal(out, &e.body) != nil || e.body.Error == "" {
		e.body.Error = fmt.Sprintf("the admin API answered %q", answerExcerpt(string(out), 200))
	}
	return nil, e
}

func answerExcerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
