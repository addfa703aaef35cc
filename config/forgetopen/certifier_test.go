package forgetopen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
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
