package certificate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden and the FuzzVerify seed corpus")

// TestSign_MatchesGoldenCertificate pins the wire format: signing the test
// payload must give the committed bytes, and they must verify. A change
// here breaks every certificate already handed out; regenerate with
// `go test ./certificate -run Golden -update` only with a new version.
func TestSign_MatchesGoldenCertificate(t *testing.T) {
	f := newFixture(t)
	files := map[string][]byte{
		"keys.json":        mustMarshalJSON(t, f.keys),
		"certificate.json": operatorCert(nil)(t, f),
	}
	for name, got := range files {
		path := filepath.Join("testdata", "golden", name)
		if *update {
			writeFile(t, path, got)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v; run go test -run Golden -update", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed:\ngot  %s\nwant %s", path, got, want)
		}
	}
	keys, err := ParseKeySet(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	if r := Verify(files["certificate.json"], keys, testNow); !r.Valid() {
		t.Errorf("golden certificate: %s: %s", r.Verdict, r.Reason)
	}
}

// fuzzSeeds are the cases of TestVerify_Verdicts kept as FuzzVerify's seed
// corpus: one or two per verdict, so mutation starts from every branch.
var fuzzSeeds = []string{
	"valid", "payload edited after signing", "one signature byte flipped",
	"self-consistent certificate made with an attacker's key", "attacker's key under the operator's key id",
	"v2 payload carrying its own fields", "unknown field in the envelope", "not JSON",
	"signature one byte short", "expired", "log proof tampered", "checkpoint signed by an untrusted key",
	"checkpoint with a bad signature line before the good one", "new key's certificate after rotation",
	// Issue 10: the JSON and time subsets, the log origin, every checkpoint
	// line, and what a certificate proves.
	"forged payload member before the real one", "lone surrogate escape", "integer written 2.0",
	"date that does not exist", "checkpoint of another log origin",
	"checkpoint with a bad signature line after the good one", "residual records left",
	"layer outside the scope", "deleted_ids.count differs from the layers' deletions",
}

func TestFuzzVerify_SeedCorpusIsCurrent(t *testing.T) {
	f := newFixture(t)
	cases := map[string]verifyCase{}
	for _, tc := range verifyCases() {
		cases[tc.name] = tc
	}
	for i, name := range fuzzSeeds {
		tc, ok := cases[name]
		if !ok {
			t.Fatalf("fuzz seed %q names no verify case", name)
		}
		path := filepath.Join("testdata", "fuzz", "FuzzVerify", fmt.Sprintf("%02d-%s", i, strings.NewReplacer(" ", "-", "'", "").Replace(name)))
		got := []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(tc.cert(t, f))) + ")\n")
		if *update {
			writeFile(t, path, got)
			continue
		}
		if want, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or stale; run go test -run SeedCorpus -update", path)
		}
	}
}

func mustMarshalJSON(t testing.TB, v interface{ MarshalJSON() ([]byte, error) }) []byte {
	t.Helper()
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
