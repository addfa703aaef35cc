package specverify

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// python is the interpreter the spec-only verifier is written for: Debian's,
// with python3-cryptography (scripts/setup.sh installs it).
const python = "/usr/bin/python3"

const vectorsDir = "../../certificate/testdata/vectors"

// manifest is certificate/testdata/vectors/manifest.json, as its README
// describes it.
type manifest struct {
	Certificates []struct {
		Name, Certificate, Keys, Now, Verdict string
		Physical, Horizon                     *string
	}
	Reports []struct {
		Name, Report, Keys, Now, Verdict string
		RequireLog                       bool `json:"require_log"`
	}
	RefusedKeys []struct{ Name, Keys string } `json:"refused_keys"`
	Folds       []struct {
		Name, Certificate, Keys, Now, Verdict string
		Physical, Horizon, Replay             *string
		Addenda                               []struct{ File, Verdict string }
	}
}

// expectation is what one run of verify.py must print and exit with.
type expectation struct {
	name  string
	argv  []string
	exit  int
	lines map[string]*string // line prefix ("verdict", "physical", …) → text; nil: no such line
}

// result is one run's answer from verify.py --batch.
type result struct {
	Stdout string `json:"stdout"`
	Exit   int    `json:"exit"`
}

// TestSpecVerifier_AgreesWithEveryVector runs verify.py, the verifier written
// from docs/certificate.md alone, over every certificate, report, refused keys
// file and fold of the vector manifest, and holds each verdict, each printed
// line and each exit status to the manifest.
func TestSpecVerifier_AgreesWithEveryVector(t *testing.T) {
	requirePythonWithCryptography(t)
	var m manifest
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "manifest.json"))
	if err != nil {
		t.Fatalf("read the vector manifest: %v", err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("parse the vector manifest: %v", err)
	}
	in := func(name string) string { return filepath.Join(vectorsDir, name) }
	str := func(s string) *string { return &s }
	exitOf := func(verdict string) int {
		if verdict == "valid" {
			return 0
		}
		return 1
	}

	var cases []expectation
	for _, c := range m.Certificates {
		cases = append(cases, expectation{
			name: "certificate " + c.Name,
			argv: []string{in(c.Keys), in(c.Certificate), "--now", c.Now},
			exit: exitOf(c.Verdict),
			lines: map[string]*string{
				"verdict": str(c.Verdict), "physical": c.Physical, "horizon": c.Horizon, "replay": nil,
			},
		})
	}
	for _, r := range m.Reports {
		argv := []string{in(r.Keys), in(r.Report), "--now", r.Now}
		if r.RequireLog {
			argv = append(argv, "--require-log")
		}
		cases = append(cases, expectation{
			name: "report " + r.Name, argv: argv, exit: exitOf(r.Verdict),
			lines: map[string]*string{"verdict": str(r.Verdict)},
		})
	}
	for _, k := range m.RefusedKeys {
		cases = append(cases, expectation{
			name: "refused keys " + k.Name, argv: []string{in(k.Keys), in("cert-valid.json")},
			exit: 2, lines: map[string]*string{"verdict": nil},
		})
	}
	if len(m.Folds) == 0 {
		t.Fatal("the manifest has no folds: the addenda rules would go untested")
	}
	for _, f := range m.Folds {
		argv := []string{in(f.Keys), in(f.Certificate), "--now", f.Now}
		lines := map[string]*string{
			"verdict": str(f.Verdict), "physical": f.Physical, "horizon": f.Horizon, "replay": f.Replay,
		}
		exit := exitOf(f.Verdict)
		for _, a := range f.Addenda {
			argv = append(argv, "--addendum", in(a.File))
			key := "addendum " + in(a.File)
			if a.Verdict == "" {
				lines[key] = nil // beside a certificate that is not valid, nothing is checked
				continue
			}
			lines[key] = str(a.Verdict)
			if a.Verdict != "valid" {
				exit = 1
			}
		}
		cases = append(cases, expectation{name: "fold " + f.Name, argv: argv, exit: exit, lines: lines})
	}

	results := runBatch(t, cases)
	for i, c := range cases {
		got := results[i]
		if got.Exit != c.exit {
			t.Errorf("%s: exit status %d, want %d\n%s", c.name, got.Exit, c.exit, got.Stdout)
		}
		printed := map[string]string{}
		for _, line := range strings.Split(got.Stdout, "\n") {
			key, text, _ := strings.Cut(line, ": ")
			if _, seen := printed[key]; !seen {
				printed[key] = text
			}
		}
		for key, want := range c.lines {
			text, ok := printed[key]
			if strings.HasPrefix(key, "addendum ") && ok {
				text, _, _ = strings.Cut(text, ":") // "valid: folded", "not_in_log: why"
			}
			switch {
			case want == nil && ok:
				t.Errorf("%s: printed %q: %q, want no such line", c.name, key, text)
			case want != nil && !ok:
				t.Errorf("%s: no %q line, want %q\n%s", c.name, key, *want, got.Stdout)
			case want != nil && text != *want:
				t.Errorf("%s: %s: %q\nwant %q", c.name, key, text, *want)
			}
		}
	}
}

// runBatch runs every case through one verify.py process (--batch), so that
// hundreds of vectors cost one interpreter start.
func runBatch(t *testing.T, cases []expectation) []result {
	t.Helper()
	argvs := make([][]string, len(cases))
	for i, c := range cases {
		argvs[i] = c.argv
	}
	input, err := json.Marshal(argvs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "verify.py", "--batch")
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s verify.py --batch: %v\n%s", python, err, stderr.String())
	}
	var results []result
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(cases) {
		t.Fatalf("verify.py --batch answered %d results for %d cases (%v)", len(results), len(cases), err)
	}
	return results
}

// requirePythonWithCryptography skips, saying what to install, when Debian's
// python3 or its cryptography module is missing; LETHE_REQUIRE_PYTHON=1 (set
// by scripts/test.sh) makes that a failure instead.
func requirePythonWithCryptography(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").CombinedOutput()
	if err == nil {
		return
	}
	msg := python + " with its cryptography module is needed to run the spec-only verifier " +
		"(apt-get install python3-cryptography, or scripts/setup.sh): " + strings.TrimSpace(string(out)+" "+err.Error())
	if os.Getenv("LETHE_REQUIRE_PYTHON") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
