package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
)

const keygenUsage = `Usage:
  lethe-proxy keygen --out FILE [--log-origin NAME]
      writes a new Ed25519 signing key to FILE (PKCS#8 PEM, mode 0600) and
      prints a trusted keys file for it on stdout; NAME is the log's
      forget.log_origin (default lethe.local/forget-log)
`

// keygenCmd makes the operator's certificate signing key.
func keygenCmd(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() { fmt.Fprint(stderr, keygenUsage) }
	out := fset.String("out", "", "where to write the private key")
	origin := fset.String("log-origin", "lethe.local/forget-log", "the transparency log's origin (forget.log_origin)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fset.NArg() > 0 {
		fmt.Fprint(stderr, "lethe-proxy keygen: --out FILE is required\n\n"+keygenUsage)
		return 2
	}
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		fmt.Fprintln(stderr, "lethe-proxy keygen:", err)
		return 1
	}
	// stdout is a complete trusted keys file holding the new key, so a
	// first setup is `keygen --out key.pem > trusted-keys.json`.
	set, err := certificate.NewKeySet(*origin, signer.TrustedKey(time.Now()))
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy keygen: --log-origin: %v\n", err)
		return 2
	}
	setJSON, err := set.MarshalJSON()
	if err != nil {
		fmt.Fprintln(stderr, "lethe-proxy keygen:", err)
		return 1
	}
	pem, err := signer.MarshalPrivateKey()
	if err != nil {
		fmt.Fprintln(stderr, "lethe-proxy keygen:", err)
		return 1
	}
	if err := writeNewFile(*out, pem); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(stderr, "lethe-proxy keygen: %s already exists; it may be the key your certificates are signed with, so it is left alone. Choose another --out.\n", *out)
		} else {
			fmt.Fprintln(stderr, "lethe-proxy keygen:", err)
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", setJSON)
	fmt.Fprintf(stderr, "Wrote the private key %s to %s (mode 0600). Keep it secret and backed up: a lost key cannot be recovered.\n"+
		"Standard output is a trusted keys file with this key, for the log %q (forget.log_origin must be the same): publish it. When rotating, add the new key's entry to the \"keys\" list of the published file and set \"not_after\" on the old key's entry.\n",
		signer.KeyID(), *out, *origin)
	return 0
}

// writeNewFile creates path with mode 0600 and fails if it exists: O_EXCL
// makes the check and the creation one step, so no key is ever overwritten.
func writeNewFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

const verifyUsage = `Usage:
  lethe-proxy verify --keys KEYS.json [--now RFC3339] CERT.json
      verifies a deletion certificate offline (CERT.json "-" reads stdin);
      prints the verdict and exits 0 only if it is valid (docs/certificate.md)
  lethe-proxy verify --keys KEYS.json [--now RFC3339] [--require-log] REPORT.json
      verifies a signed report (of lethe-proxy sweep or reconcile) the same
      way: its signature, that it is not dated after now, and the log's
      proof that it was logged; prints its counts. A report without a log
      section is valid and printed "not logged", unless --require-log makes
      it not_in_log
`

// verifyCmd verifies a certificate against a trusted keys file.
func verifyCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("verify", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() { fmt.Fprint(stderr, verifyUsage) }
	keysFile := fset.String("keys", "", "the operator's trusted keys file")
	nowFlag := fset.String("now", "", "verify as of this RFC 3339 time instead of now")
	requireLog := fset.Bool("require-log", false, "a report without a log section is not_in_log (a certificate always needs one)")
	// Flags may follow the certificate: `verify cert.json --keys k.json`.
	var certs []string
	for {
		if err := fset.Parse(args); err != nil {
			return 2
		}
		if fset.NArg() == 0 {
			break
		}
		certs, args = append(certs, fset.Arg(0)), fset.Args()[1:]
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy verify: "+format+"\n\n"+verifyUsage, a...)
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
		var err error
		if now, err = certificate.ParseTime(*nowFlag); err != nil {
			return usageErr("--now %q is not an RFC 3339 time; write it like 2026-07-01T00:00:00Z", *nowFlag)
		}
	}
	keyData, err := os.ReadFile(*keysFile)
	if err != nil {
		return usageErr("reading the trusted keys: %v", err)
	}
	keys, err := certificate.ParseKeySet(keyData)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy verify: %s: %v\n", *keysFile, err)
		return 2
	}
	cert, err := readCertificate(certs[0], stdin)
	if err != nil {
		return usageErr("reading the certificate: %v", err)
	}
	if certificate.IsReport(cert) {
		return verifyReport(cert, keys, certificate.ReportPolicy{Now: now, RequireLog: *requireLog}, stdout)
	}
	r := certificate.Verify(cert, keys, now)
	fmt.Fprintf(stdout, "verdict: %s\nreason: %s\n", r.Verdict, r.Reason)
	if !r.Valid() {
		return 1
	}
	return 0
}

// readCertificate reads at most one byte more than a certificate may hold,
// so an oversized input gets its verdict without being read whole.
func readCertificate(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, certificate.MaxSize+1))
}
