package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/certificate/offline"
)

// keygenCmd makes the operator's certificate signing key.
func keygenCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := newFlagSet("keygen", usageOf("keygen"), stderr)
	out := fset.String("out", "", "where to write the private key")
	origin := fset.String("log-origin", "lethe.local/forget-log", "the transparency log's origin (forget.log_origin)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "keygen")
	if *out == "" || fset.NArg() > 0 {
		fmt.Fprint(stderr, "lethe-proxy keygen: --out FILE is required\n\n"+usageOf("keygen"))
		return 2
	}
	key, err := offline.GenerateKey(*out, *origin)
	switch {
	case offline.IsOriginError(err):
		return fail(2, "--log-origin: %v", err)
	case errors.Is(err, fs.ErrExist):
		return fail(1, "%s already exists; it may be the key your certificates are signed with, so it is left alone. Choose another --out.", *out)
	case err != nil:
		return fail(1, "%v", err)
	}
	// stdout is a complete trusted keys file holding the new key, so a
	// first setup is `keygen --out key.pem > trusted-keys.json`.
	fmt.Fprintf(stdout, "%s\n", key.TrustedKeys)
	fmt.Fprintf(stderr, "Wrote the private key %s to %s (mode 0600). Keep it secret and backed up: a lost key cannot be recovered.\n"+
		"Standard output is a trusted keys file with this key, for the log %q (forget.log_origin must be the same): publish it. When rotating, add the new key's entry to the \"keys\" list of the published file and set \"not_after\" on the old key's entry.\n",
		key.KeyID, *out, *origin)
	return 0
}

// verifyCmd verifies a certificate against a trusted keys file.
func verifyCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := newFlagSet("verify", usageOf("verify"), stderr)
	keysFile := fset.String("keys", "", "the operator's trusted keys file")
	nowFlag := fset.String("now", "", "verify as of this RFC 3339 time instead of now")
	requireLog := fset.Bool("require-log", false, "a report without a log section is not_in_log (a certificate always needs one)")
	var addendumFiles []string
	fset.Func("addendum", "a signed forget.physical or forget.replayed report of the certificate's request, folded into the lines beside its verdict (repeatable)", func(file string) error {
		addendumFiles = append(addendumFiles, file)
		return nil
	})
	// Flags may follow the certificate: `verify cert.json --keys k.json`.
	certs, err := parseInterspersed(fset, args)
	if err != nil {
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy verify: "+format+"\n\n"+usageOf("verify"), a...)
		return 2
	}
	if *keysFile == "" {
		return usageErr("--keys KEYS.json is required: the trusted keys file the operator publishes")
	}
	if len(certs) != 1 {
		return usageErr("give exactly one certificate file (or - for stdin), not %d", len(certs))
	}
	now := time.Now()
	if *nowFlag != "" {
		if now, err = certificate.ParseTime(*nowFlag); err != nil {
			return usageErr("--now %q is not an RFC 3339 time; write it like 2026-07-01T00:00:00Z", *nowFlag)
		}
	}
	keys, err := certificate.ReadKeySet(*keysFile)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy verify: --keys: %v\n", err)
		return 2
	}
	cert, err := offline.ReadEvidence(certs[0], stdin)
	if err != nil {
		return usageErr("reading the certificate: %v", err)
	}
	if len(addendumFiles) > 0 {
		if certificate.IsReport(cert) {
			return usageErr("--addendum goes with a certificate; %s is a signed report", certs[0])
		}
		addenda, err := offline.ReadAddenda(addendumFiles)
		if err != nil {
			return usageErr("%v", err)
		}
		if !offline.VerifyWithAddenda(cert, addenda, keys, now, stdout) {
			return 1
		}
		return 0
	}
	if !offline.Verify(cert, keys, certificate.ReportPolicy{Now: now, RequireLog: *requireLog}, stdout) {
		return 1
	}
	return 0
}
