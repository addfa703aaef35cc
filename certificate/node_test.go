package certificate

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNodeVerifier_AgreesWithGo runs node/verify.mjs, the independent
// verifier, on every certificate of TestVerify_Verdicts and requires the
// same verdict, and exit status 0 exactly for valid.
func TestNodeVerifier_AgreesWithGo(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("LETHE_REQUIRE_NODE") == "1" {
			t.Fatal("node is not on PATH and LETHE_REQUIRE_NODE=1; install Node.js 20 or later")
		}
		t.Skip("node is not on PATH; set LETHE_REQUIRE_NODE=1 to make this a failure")
	}
	f := newFixture(t)
	for _, tc := range verifyCases() {
		if tc.goOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run starts a node process; the fixture is read-only
			keys, now := f.keys, testNow
			if tc.keys != nil {
				keys = tc.keys(f)
			}
			if !tc.now.IsZero() {
				now = tc.now
			}
			cert := tc.cert(t, f)
			dir := t.TempDir()
			keysPath, certPath := filepath.Join(dir, "keys.json"), filepath.Join(dir, "cert.json")
			writeJSONFile(t, keysPath, keys)
			if err := os.WriteFile(certPath, cert, 0o644); err != nil {
				t.Fatal(err)
			}
			goVerdict := Verify(cert, keys, now).Verdict

			cmd := exec.Command(node, "node/verify.mjs", keysPath, certPath, "--now", now.Format(time.RFC3339))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			nodeVerdict, _, _ := strings.Cut(strings.TrimPrefix(stdout.String(), "verdict: "), "\n")
			if Verdict(nodeVerdict) != goVerdict {
				t.Fatalf("node says %q, Go says %s\nnode stdout: %s\nnode stderr: %s", nodeVerdict, goVerdict, stdout.String(), stderr.String())
			}
			if wantCode := map[bool]int{true: 0, false: 1}[goVerdict == VerdictValid]; code != wantCode {
				t.Errorf("node exited %d for %s, want %d; stderr: %s", code, goVerdict, wantCode, stderr.String())
			}
		})
	}
}

func TestNodeVerifier_RefusesAnInconsistentKeysFile(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	f := newFixture(t)
	dir := t.TempDir()
	keys, _ := f.keys.MarshalJSON()
	keys = bytes.Replace(keys, []byte(f.op.KeyID()), []byte(f.attacker.KeyID()), 1)
	keysPath, certPath := filepath.Join(dir, "keys.json"), filepath.Join(dir, "cert.json")
	if err := os.WriteFile(keysPath, keys, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, operatorCert(nil)(t, f), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "node/verify.mjs", keysPath, certPath).CombinedOutput()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 2 || !bytes.Contains(out, []byte("does not match")) {
		t.Errorf("node: %v\n%s\nwant exit status 2 and the key id mismatch named", err, out)
	}
}

func writeJSONFile(t testing.TB, path string, v interface{ MarshalJSON() ([]byte, error) }) {
	t.Helper()
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
