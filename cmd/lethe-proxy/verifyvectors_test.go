package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The test vectors of docs/certificate.md, which node/verify.mjs and the
// certificate package's tests also run.
const vectorsDir = "../../certificate/testdata/vectors"

// TestVerifyCmd_AgreesWithTheVectors runs every certificate and report
// vector through `lethe-proxy verify`: the verdict line names the
// vector's verdict, the exit status is 0 exactly for valid, and every
// refused keys file stops it with exit 2 before it reads a certificate
// or a report.
func TestVerifyCmd_AgreesWithTheVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Certificates []struct{ Name, Certificate, Keys, Now, Verdict string }
		Reports      []struct {
			Name, Report, Keys, Now, Verdict string
			RequireLog                       bool `json:"require_log"`
		}
		RefusedKeys []struct{ Name, Keys string } `json:"refused_keys"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Certificates) == 0 || len(m.Reports) == 0 || len(m.RefusedKeys) == 0 {
		t.Fatal("the manifest lists no vectors")
	}
	check := func(t *testing.T, verdict string, args ...string) {
		code, out, errOut := certCLI("", append([]string{"verify"}, args...)...)
		got, _, _ := strings.Cut(strings.TrimPrefix(out, "verdict: "), "\n")
		if got != verdict {
			t.Fatalf("verdict %q, want %s\nstdout: %s\nstderr: %s", got, verdict, out, errOut)
		}
		if want := map[bool]int{true: 0, false: 1}[verdict == "valid"]; code != want {
			t.Errorf("exit %d for %s, want %d", code, verdict, want)
		}
	}
	for _, v := range m.Certificates {
		t.Run("certificate/"+v.Name, func(t *testing.T) {
			check(t, v.Verdict, "--keys", filepath.Join(vectorsDir, v.Keys), "--now", v.Now, filepath.Join(vectorsDir, v.Certificate))
		})
	}
	for _, v := range m.Reports {
		t.Run("report/"+v.Name, func(t *testing.T) {
			args := []string{"--keys", filepath.Join(vectorsDir, v.Keys), "--now", v.Now, filepath.Join(vectorsDir, v.Report)}
			if v.RequireLog {
				args = append(args, "--require-log")
			}
			check(t, v.Verdict, args...)
		})
	}
	for _, v := range m.RefusedKeys {
		for _, doc := range []string{m.Certificates[0].Certificate, m.Reports[0].Report} {
			t.Run("keys/"+v.Name+"/"+doc, func(t *testing.T) {
				code, out, errOut := certCLI("", "verify", "--keys", filepath.Join(vectorsDir, v.Keys), filepath.Join(vectorsDir, doc))
				if code != 2 || out != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2, the keys file refused", code, out, errOut)
				}
			})
		}
	}
}
