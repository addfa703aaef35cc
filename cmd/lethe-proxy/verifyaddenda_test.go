package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyCmd_FoldsTheVectorsAddenda runs every fold vector through
// `lethe-proxy verify --addendum`: the certificate's verdict unchanged,
// the lines beside it, a line per addendum with its verdict, and exit 0
// exactly when the certificate is valid and every addendum was folded.
func TestVerifyCmd_FoldsTheVectorsAddenda(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Folds []struct {
			Name, Certificate, Keys, Now, Verdict, Physical, Horizon, Replay string
			Addenda                                                          []struct{ File, Verdict string }
		}
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.Folds) == 0 {
		t.Fatalf("the manifest lists no folds (%v)", err)
	}
	for _, v := range m.Folds {
		t.Run(v.Name, func(t *testing.T) {
			args := []string{"verify", "--keys", filepath.Join(vectorsDir, v.Keys), "--now", v.Now, filepath.Join(vectorsDir, v.Certificate)}
			folded := v.Verdict == "valid"
			for _, a := range v.Addenda {
				args = append(args, "--addendum", filepath.Join(vectorsDir, a.File))
				folded = folded && a.Verdict == "valid"
			}
			code, out, errOut := certCLI("", args...)
			lines := strings.Split(out, "\n")
			if lines[0] != "verdict: "+v.Verdict {
				t.Fatalf("%q, want verdict %s\nstderr: %s", lines[0], v.Verdict, errOut)
			}
			for _, want := range [][2]string{{"physical: ", v.Physical}, {"horizon: ", v.Horizon}, {"replay: ", v.Replay}} {
				got := ""
				for _, l := range lines {
					if rest, ok := strings.CutPrefix(l, want[0]); ok {
						got = rest
					}
				}
				if got != want[1] {
					t.Errorf("%sline %q, want %q", want[0], got, want[1])
				}
			}
			for _, a := range v.Addenda {
				prefix := "addendum " + filepath.Join(vectorsDir, a.File) + ": " + a.Verdict + ": "
				if a.Verdict != "" && !strings.Contains(out, "\n"+prefix) {
					t.Errorf("no line %q in\n%s", prefix, out)
				}
			}
			if want := map[bool]int{true: 0, false: 1}[folded]; code != want {
				t.Errorf("exit %d, want %d\n%s", code, want, out)
			}
		})
	}
}

// An addendum beside a report, or an addendum that cannot be read, is a
// usage error (exit 2) that names the fix, and nothing is verified.
func TestVerifyCmd_AddendumUsageErrors(t *testing.T) {
	keys := filepath.Join(vectorsDir, "keys.json")
	addendum := filepath.Join(vectorsDir, "addendum-re-scan-clean.json")
	code, out, errOut := certCLI("", "verify", "--keys", keys, filepath.Join(vectorsDir, "report-valid-sweep.json"), "--addendum", addendum)
	if code != 2 || out != "" || !strings.Contains(errOut, "--addendum goes with a certificate") {
		t.Errorf("beside a report: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	missing := filepath.Join(t.TempDir(), "absent.json")
	code, out, errOut = certCLI("", "verify", "--keys", keys, filepath.Join(vectorsDir, "cert-valid.json"), "--addendum", missing)
	if code != 2 || out != "" || !strings.Contains(errOut, "reading the addendum "+missing) {
		t.Errorf("unreadable addendum: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
