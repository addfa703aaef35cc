package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/translog"
)

// oneLeafCheckpoint logs leaf as the only record of a transparency log
// named origin and signed by signer, and returns the log's signed
// checkpoint: its root is the leaf's hash and the leaf's proof is empty.
func oneLeafCheckpoint(t *testing.T, signer *certificate.Signer, origin string, leaf []byte) string {
	t.Helper()
	l, err := translog.New(&translog.MemoryStorage{}, signer.NoteSigner(origin), origin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(t.Context(), leaf); err != nil {
		t.Fatal(err)
	}
	cp, err := l.Sign(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(cp.Note)
}

// certCLI runs lethe-proxy with args and stdin, as main does.
func certCLI(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

var certIssued = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// certFiles writes a trusted keys file and a logged certificate signed by a
// new key, valid for a year from certIssued, and returns their paths.
func certFiles(t *testing.T) (keysPath, certPath string) {
	t.Helper()
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	digest := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	ids, err := certificate.IDsRoot([]certificate.RecordRef{{Store: "postgres", Table: "public.docs", ID: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := certificate.Sign(signer, certificate.Payload{
		RequestID: "req-1", IssuedAt: certIssued, ValidUntil: certIssued.AddDate(1, 0, 0),
		Subject: certificate.Subject{HMAC: digest("hmac"), Commitment: digest("commitment")},
		Scope:   []certificate.Scope{{Store: "postgres", Table: "public.docs"}},
		Layers: []certificate.Layer{{Store: "postgres", Table: "public.docs", Requested: 1, Deleted: 1, VerifiedAbsent: true,
			VerifyMethod: "re-query", VerifyQueries: []string{"SELECT count(*) FROM public.docs WHERE id = ANY($1)"}}},
		DeletedIDs: ids, RulesSHA256: digest("rules"), Tool: "lethe-proxy test",
		Claim: certificate.Claim{Statement: "Deleted the test records."},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A log of one leaf: its root is the leaf hash and the proof is empty.
	leaf, err := env.CompletedLeaf()
	if err != nil {
		t.Fatal(err)
	}
	cp := oneLeafCheckpoint(t, signer, "log.example/cli", leaf)
	env.AttachLog(leaf, 0, nil, cp)
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := certificate.NewKeySet("log.example/cli", signer.TrustedKey(certIssued.AddDate(-1, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	keyData, err := keys.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keysPath, certPath = filepath.Join(dir, "keys.json"), filepath.Join(dir, "cert.json")
	for path, b := range map[string][]byte{keysPath: keyData, certPath: data} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return keysPath, certPath
}

func TestVerifyCmd_Verdicts(t *testing.T) {
	keys, cert := certFiles(t)
	data, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	env, err := certificate.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	env.Signature.Sig[0] ^= 1
	forged, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	if err := os.WriteFile(tampered, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	inside, after := "--now=2026-07-01T00:00:00Z", "--now=2027-07-01T00:00:00Z"
	for _, tc := range []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"valid", "", []string{"verify", "--keys", keys, inside, cert}, 0, "verdict: valid\nreason: request req-1"},
		{"valid from stdin", string(data), []string{"verify", "--keys", keys, inside, "-"}, 0, "verdict: valid\n"},
		{"flags after the certificate", "", []string{"verify", cert, "--keys", keys, inside}, 0, "verdict: valid\n"},
		{"expired", "", []string{"verify", "--keys", keys, after, cert}, 1, "verdict: expired\n"},
		{"signature flipped", "", []string{"verify", "--keys", keys, inside, tampered}, 1, "verdict: bad_signature\n"},
		{"oversized on stdin", strings.Repeat(" ", certificate.MaxSize+10), []string{"verify", "--keys", keys, "-"}, 1, "verdict: oversized\n"},
		{"not a certificate", "hello", []string{"verify", "--keys", keys, "-"}, 1, "verdict: malformed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := certCLI(tc.stdin, tc.args...)
			if code != tc.wantCode || !strings.HasPrefix(stdout, tc.wantOut) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout starting %q", code, stdout, stderr, tc.wantCode, tc.wantOut)
			}
		})
	}
}

func TestVerifyCmd_UsageErrorsSayWhatToDo(t *testing.T) {
	keys, cert := certFiles(t)
	badKeys := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badKeys, []byte(`{"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no keys", []string{"verify", cert}, "--keys KEYS.json is required"},
		{"no certificate", []string{"verify", "--keys", keys}, "exactly one certificate"},
		{"two certificates", []string{"verify", "--keys", keys, cert, cert}, "(or - for stdin), not 2"},
		{"bad --now", []string{"verify", "--keys", keys, "--now", "yesterday", cert}, "write it like 2026-07-01T00:00:00Z"},
		{"--now with an offset of 24 hours", []string{"verify", "--keys", keys, "--now", "2026-07-01T00:00:00+24:00", cert}, "is not an RFC 3339 time"},
		{"missing keys file", []string{"verify", "--keys", keys + ".missing", cert}, "lethe-proxy verify: --keys: certificate: reading the trusted keys file: open " + keys + ".missing"},
		{"empty keys file", []string{"verify", "--keys", badKeys, cert}, "lethe-proxy keygen"},
		{"missing certificate", []string{"verify", "--keys", keys, cert + ".missing"}, "reading the certificate"},
		{"unknown flag", []string{"verify", "--key", keys, cert}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := certCLI("", tc.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and stderr mentioning %q", code, stdout, stderr, tc.wantErr)
			}
		})
	}
}

func TestKeygenCmd_WritesAPrivateKeyAndPrintsItsKeySet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lethe.key")
	before := time.Now().Add(-time.Second)
	code, stdout, stderr := certCLI("", "keygen", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	pem, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := certificate.LoadPrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct {
			KeyID     string    `json:"key_id"`
			NotBefore time.Time `json:"not_before"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(stdout), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("stdout is not a key set of one key: %v\n%s", err, stdout)
	}
	if entry := set.Keys[0]; entry.KeyID != signer.KeyID() || entry.NotBefore.Before(before.Truncate(time.Second)) {
		t.Errorf("entry %+v, want key %s from now", entry, signer.KeyID())
	}
	keys, err := certificate.ParseKeySet([]byte(stdout))
	if err != nil {
		t.Fatalf("the printed key set does not load: %v", err)
	}
	if _, ok := keys.Lookup(signer.KeyID()); !ok {
		t.Errorf("the printed key set does not hold the new key")
	}
	if !strings.Contains(stderr, `"keys" list`) {
		t.Errorf("stderr does not say where the entry goes: %s", stderr)
	}
}

func TestKeygenCmd_NeverOverwritesAKey(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lethe.key")
	if err := os.WriteFile(out, []byte("the old key"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := certCLI("", "keygen", "--out", out)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "Choose another --out") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and advice", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "the old key" {
		t.Errorf("the existing file was changed to %q", b)
	}
}

func TestKeygenCmd_RequiresOut(t *testing.T) {
	if code, _, stderr := certCLI("", "keygen"); code != 2 || !strings.Contains(stderr, "--out FILE is required") {
		t.Errorf("exit %d, stderr %q; want 2 and the missing flag named", code, stderr)
	}
}
