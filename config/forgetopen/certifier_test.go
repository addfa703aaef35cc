package forgetopen

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// TestTrustedKeys_PinTheConfiguredLogOrigin: the key set the proxy
// verifies with names forget.log_origin, and a published file for another
// log is refused at start rather than failing every certificate later.
func TestTrustedKeys_PinTheConfiguredLogOrigin(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := trustedKeys("", "example.com/lethe-log", signer)
	if err != nil || keys.LogOrigin() != "example.com/lethe-log" {
		t.Fatalf("default key set: origin %q, %v", keys.LogOrigin(), err)
	}
	set, err := certificate.NewKeySet("example.com/staging-log", signer.TrustedKey(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := set.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trustedKeys(path, "example.com/lethe-log", signer); err == nil || !strings.Contains(err.Error(), "forget.log_origin") {
		t.Fatalf("a keys file of another log: %v; want it refused, naming forget.log_origin", err)
	}
	if _, err := trustedKeys(path, "example.com/staging-log", signer); err != nil {
		t.Fatal(err)
	}
}

// forget.trusted_keys is read with certificate.ReadKeySet: a file that is
// missing or is not a keys file is refused naming the key, the file and
// the fix.
func TestTrustedKeys_AFileThatCannotBeReadNamesTheKeyAndTheFile(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "absent.json"), filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"log_origin":"example.com/lethe-log","keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		missing: "forget.trusted_keys: certificate: reading the trusted keys file: open " + missing,
		empty:   "forget.trusted_keys: " + empty + ": certificate: trusted keys: the set is empty",
	} {
		if _, err := trustedKeys(file, "example.com/lethe-log", signer); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("trustedKeys(%s): %v; want an error containing %q", file, err, want)
		}
	}
}

// The certifier records its signing key in the log (key.rotated) before
// anything it signs, once: a second certifier with the same key appends
// nothing.
func TestCertifier_AnnouncesItsKeyOnce(t *testing.T) {
	dir := t.TempDir()
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := signer.MarshalPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(context.Background(), ledger.Location{SQLite: filepath.Join(dir, "ledger.db")}, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := &config.Config{}
	cfg.Forget.SigningKey, cfg.Forget.LogOrigin = keyFile, "test.local/forgetopen"
	ctx := context.Background()
	events := func() []string {
		size, err := l.TransparencyLog().Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for n := range size {
			leaf, err := l.TransparencyLog().ReadRecord(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			e, err := certificate.ParseEvent(leaf)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.Event)
		}
		return out
	}
	for range 2 {
		if _, got, err := Certifier(ctx, cfg, l, "forgetopen test", slog.New(slog.DiscardHandler)); err != nil || got.KeyID() != signer.KeyID() {
			t.Fatalf("signer %v, error %v", got, err)
		}
		if got := events(); len(got) != 1 || got[0] != certificate.EventKeyRotated {
			t.Fatalf("log holds %v; want one key.rotated", got)
		}
	}
}
