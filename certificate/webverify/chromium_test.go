package webverify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lethe-privacy/lethe/test/chromiumtest"
)

// The page in headless Chromium, against every shared test vector
// (certificate/testdata/vectors): the verdict each must get, which
// TestVectors_Go and TestVectors_Node pin for the Go and Node verifiers.
// One browser and one tab run them all, through the page's own file
// inputs, as an auditor would.

const vectorsDir = "../testdata/vectors"

// manifest is the part of testdata/vectors/manifest.json the page needs.
type manifest struct {
	Certificates []struct {
		Name, Certificate, Keys, Now, Verdict string
		Physical                              string // the physical line of a valid v2 or v3 certificate
		Horizon                               string // the horizon line of a valid v3 certificate
	} `json:"certificates"`
	Reports []struct {
		Name, Report, Keys, Now, Verdict string
		RequireLog                       bool `json:"require_log"`
	} `json:"reports"`
	RefusedKeys []struct {
		Name, Keys string
	} `json:"refused_keys"`
	Folds []struct {
		Name, Certificate, Keys, Now, Verdict string
		Physical, Horizon, Replay             string
		Addenda                               []struct{ File, Verdict string }
	} `json:"folds"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Certificates) == 0 || len(m.Reports) == 0 || len(m.RefusedKeys) == 0 {
		t.Fatal("the manifest lists no vectors")
	}
	return m
}

// outcome is what the page shows after a verification.
type outcome struct {
	State    string `json:"state"` // verdict, keys-refused or error
	Verdict  string `json:"verdict"`
	Physical string `json:"physical"` // the physical line, without "physical: "
	Horizon  string `json:"horizon"`  // the horizon line, without "horizon: "
	Reason   string `json:"reason"`
}

// tab is the verifier page open in a browser tab.
type tab struct {
	ctx     context.Context
	console func() string
	keys    string // the keys file last picked
}

// open navigates to the page at url and waits for its script to have run.
func open(t *testing.T, url string) *tab {
	t.Helper()
	ctx, console := chromiumtest.Tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	ready, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('result').dataset.state + ': ' + document.getElementById('reason').textContent`))
	if err != nil || !strings.HasPrefix(ready, "idle: Pick") {
		t.Fatalf("the page's script did not run (%q, %v); console:\n%s", ready, err, console())
	}
	return &tab{ctx: ctx, console: console}
}

// vectorPath is the absolute path of a file of the vectors directory, or
// path itself when it is absolute.
func vectorPath(t *testing.T, path string) string {
	t.Helper()
	if filepath.IsAbs(path) {
		return path
	}
	abs, err := filepath.Abs(filepath.Join(vectorsDir, path))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// verify picks the files (names in the vectors directory, or absolute
// paths), sets the options, and returns what the page shows for exactly
// these inputs.
func (p *tab) verify(t *testing.T, keys, doc, now string, requireLog bool) outcome {
	t.Helper()
	keysPath, docPath := vectorPath(t, keys), vectorPath(t, doc)
	var steps []chromedp.Action[chromedp.Void]
	if keys != p.keys {
		steps = append(steps, chromedp.SetUploadFiles(chromedp.CSS("#keys"), []string{keysPath}))
		p.keys = keys
	}
	steps = append(steps,
		chromedp.SetUploadFiles(chromedp.CSS("#document"), []string{docPath}),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('now').value = %q;
			document.getElementById('require-log').checked = %t;
			document.getElementById('verify').click();`, now, requireLog)),
	)
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		t.Fatalf("picking %s and %s: %v", keys, doc, err)
	}
	return p.await(t, what(filepath.Base(doc), filepath.Base(keys), now, requireLog))
}

// what is the line the page shows under a result: which inputs gave it.
func what(doc, keys, now string, requireLog bool) string {
	if now == "" {
		now = "now"
	}
	s := fmt.Sprintf("%s against %s, as of %s", doc, keys, now)
	if requireLog {
		s += ", log required"
	}
	return s
}

// await waits for the page to show a result for the inputs described by
// want (its "what" line) and returns it.
func (p *tab) await(t *testing.T, want string) outcome {
	t.Helper()
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(p.ctx, chromedp.Poll[outcome](fmt.Sprintf(`(() => {
		const r = document.getElementById('result');
		if (document.getElementById('what').textContent !== %s || !['verdict', 'keys-refused', 'error'].includes(r.dataset.state)) return null;
		return { state: r.dataset.state, verdict: r.dataset.verdict, reason: document.getElementById('reason').textContent,
			physical: document.getElementById('physical').textContent.replace(/^physical: /, ''),
			horizon: document.getElementById('horizon').textContent.replace(/^horizon: /, '') };
	})()`, wantJSON), chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("no result for %s: %v; console:\n%s", want, err, p.console())
	}
	return got
}

// nodeScript verifies, in one Node process, the inputs it reads as JSON
// lines [keys, document, now, requireLog] from stdin, with the modules
// the page inlines, and prints for each {verdict, reason}, or {refused}
// with the message of a refused keys file.
const nodeScript = `
import { readFileSync } from 'node:fs';
import { loadKeys, parseTime, verify } from %s;
const out = [];
for (const line of readFileSync(0, 'utf8').split('\n').filter(Boolean)) {
  const [keys, doc, now, requireLog] = JSON.parse(line);
  let trust;
  try {
    trust = await loadKeys(readFileSync(keys));
  } catch (e) {
    out.push({ refused: e.message });
    continue;
  }
  out.push(await verify(readFileSync(doc), trust, parseTime(now), requireLog));
}
process.stdout.write(JSON.stringify(out));
`

// nodeResult is what nodeScript prints for one input.
type nodeResult struct {
	Verdict, Reason, Refused string
	Physical, Horizon        string
}

// nodeVerdicts runs the verifier's modules in Node over inputs
// ([keys, document, now, requireLog], paths in the vectors directory), or
// returns nil when there is no Node (a failure with LETHE_REQUIRE_NODE=1).
func nodeVerdicts(t *testing.T, inputs [][4]any) []nodeResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("LETHE_REQUIRE_NODE") == "1" {
			t.Fatal("node is not on PATH and LETHE_REQUIRE_NODE=1; install Node.js 20 or later")
		}
		t.Log("node is not on PATH: the page's reasons are not compared with Node's")
		return nil
	}
	document, err := filepath.Abs("../node/document.mjs")
	if err != nil {
		t.Fatal(err)
	}
	var stdin strings.Builder
	for _, in := range inputs {
		in[0], in[1] = filepath.Join(vectorsDir, in[0].(string)), filepath.Join(vectorsDir, in[1].(string))
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		stdin.Write(append(b, '\n'))
	}
	url, err := json.Marshal("file://" + filepath.ToSlash(document))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--input-type=module", "-e", fmt.Sprintf(nodeScript, url))
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var results []nodeResult
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(inputs) {
		t.Fatalf("node printed %d results for %d inputs (%v)", len(results), len(inputs), err)
	}
	return results
}

// TestPage_VerdictsOfEveryVector: from a file (file://, as an auditor
// opens a saved copy, offline), the page gives every certificate and
// report vector its verdict, with the reason Node's verifier gives, and
// refuses every refused keys file with Node's message.
func TestPage_VerdictsOfEveryVector(t *testing.T) {
	m := readManifest(t)
	type vector struct {
		name, keys, doc, now string
		requireLog           bool
		verdict              string // empty: the keys file must be refused
		physical             string // the physical line of a valid v2 or v3 certificate
		horizon              string // the horizon line of a valid v3 certificate
	}
	var vectors []vector
	for _, v := range m.Certificates {
		vectors = append(vectors, vector{"certificate " + v.Name, v.Keys, v.Certificate, v.Now, false, v.Verdict, v.Physical, v.Horizon})
	}
	for _, v := range m.Reports {
		vectors = append(vectors, vector{"report " + v.Name, v.Keys, v.Report, v.Now, v.RequireLog, v.Verdict, "", ""})
	}
	for _, v := range m.RefusedKeys {
		vectors = append(vectors, vector{"keys file " + v.Name, v.Keys, m.Certificates[0].Certificate, m.Certificates[0].Now, false, "", "", ""})
	}
	var inputs [][4]any
	for _, v := range vectors {
		inputs = append(inputs, [4]any{v.keys, v.doc, v.now, v.requireLog})
	}
	node := nodeVerdicts(t, inputs)
	path := filepath.Join(t.TempDir(), "lethe-verify.html")
	if err := os.WriteFile(path, Page, 0o644); err != nil {
		t.Fatal(err)
	}
	page := open(t, "file://"+path)
	for i, v := range vectors {
		got := page.verify(t, v.keys, v.doc, v.now, v.requireLog)
		if v.verdict == "" {
			if got.State != "keys-refused" || !strings.Contains(got.Reason, "get the operator's keys file") {
				t.Errorf("%s: the page shows %s %q (%s), want the keys file refused", v.name, got.State, got.Verdict, got.Reason)
			} else if node != nil && !strings.Contains(got.Reason, ": "+node[i].Refused+";") {
				t.Errorf("%s: the page says %q, Node %q", v.name, got.Reason, node[i].Refused)
			}
			continue
		}
		if got.State != "verdict" || got.Verdict != v.verdict {
			t.Errorf("%s: the page shows %s %q (%s), want verdict %s", v.name, got.State, got.Verdict, got.Reason, v.verdict)
		} else if node != nil && (node[i].Verdict != got.Verdict || node[i].Reason != got.Reason) {
			t.Errorf("%s: the page says %s (%s), Node %s (%s)", v.name, got.Verdict, got.Reason, node[i].Verdict, node[i].Reason)
		}
		if got.Physical != v.physical || (node != nil && node[i].Physical != v.physical) {
			t.Errorf("%s: the page's physical line %q, Node's %q, want %q", v.name, got.Physical, nodePhysical(node, i), v.physical)
		}
		if got.Horizon != v.horizon || (node != nil && node[i].Horizon != v.horizon) {
			t.Errorf("%s: the page's horizon line %q, Node's %+v, want %q", v.name, got.Horizon, nodeHorizon(node, i), v.horizon)
		}
	}
}

// TestPage_FileOverTheLimitIsOversized: a file of more than 1 MiB is
// oversized, as the command-line verifiers say. Its first MiB is a valid
// certificate followed by spaces, so a page that read one byte fewer than
// MAX_SIZE+1 would call it valid.
func TestPage_FileOverTheLimitIsOversized(t *testing.T) {
	m := readManifest(t)
	valid := m.Certificates[0]
	cert, err := os.ReadFile(filepath.Join(vectorsDir, valid.Certificate))
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "big-cert.json")
	if err := os.WriteFile(big, append(cert, bytes.Repeat([]byte(" "), 1<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lethe-verify.html")
	if err := os.WriteFile(path, Page, 0o644); err != nil {
		t.Fatal(err)
	}
	page := open(t, "file://"+path)
	if got := page.verify(t, valid.Keys, big, valid.Now, false); got.Verdict != "oversized" {
		t.Fatalf("the page shows %s %q (%s), want oversized", got.State, got.Verdict, got.Reason)
	}
}

// TestPage_ServedAndDropped: served as the admin listener serves it (with
// its content security policy as a header too), the page runs, verifies
// picked files, and takes both files dropped on it at once, telling the
// keys file from the certificate by their contents.
func TestPage_ServedAndDropped(t *testing.T) {
	m := readManifest(t)
	valid := m.Certificates[0]
	if valid.Verdict != "valid" {
		t.Fatalf("the first certificate vector is %s, not valid", valid.Verdict)
	}
	srv := httptest.NewServer(http.HandlerFunc(Serve))
	defer srv.Close()
	page := open(t, srv.URL+"/verify")
	if got := page.verify(t, valid.Keys, valid.Certificate, valid.Now, false); got.Verdict != "valid" {
		t.Fatalf("served: the page shows %s %q (%s), want valid", got.State, got.Verdict, got.Reason)
	}

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(vectorsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	files, err := json.Marshal([][2]string{{"cert.json", read(valid.Certificate)}, {"trusted-keys.json", read(valid.Keys)}})
	if err != nil {
		t.Fatal(err)
	}
	drop := fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		for (const [name, text] of %s) dt.items.add(new File([text], name, { type: 'application/json' }));
		document.getElementById('now').value = %q;
		document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`, files, valid.Now)
	if err := chromedp.Do(page.ctx, chromedp.Evaluate[chromedp.Void](drop)); err != nil {
		t.Fatal(err)
	}
	if got := page.await(t, what("cert.json", "trusted-keys.json", valid.Now, false)); got.Verdict != "valid" {
		t.Fatalf("dropped: the page shows %s %q (%s), want valid", got.State, got.Verdict, got.Reason)
	}
}

// nodePhysical is Node's physical line for input i, or "" without Node.
func nodePhysical(node []nodeResult, i int) string {
	if node == nil {
		return ""
	}
	return node[i].Physical
}

// nodeHorizon is Node's horizon line for input i, or "" without Node.
func nodeHorizon(node []nodeResult, i int) string {
	if node == nil {
		return ""
	}
	return node[i].Horizon
}

// foldOutcome is what the page shows after verifying a certificate with
// addenda.
type foldOutcome struct {
	outcome
	Replay string   `json:"replay"` // the replay line, without "replay: "
	Folded []string `json:"folded"` // a line per addendum, as the command-line verifiers print them
}

// verifyFold picks the keys file, the certificate and the addenda (names
// in the vectors directory) and returns what the page shows for them.
func (p *tab) verifyFold(t *testing.T, keys, doc, now string, addenda []string) foldOutcome {
	t.Helper()
	var paths []string
	for _, a := range addenda {
		paths = append(paths, vectorPath(t, a))
	}
	if err := chromedp.Do(p.ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#keys"), []string{vectorPath(t, keys)}),
		chromedp.SetUploadFiles(chromedp.CSS("#addenda"), paths),
		chromedp.SetUploadFiles(chromedp.CSS("#document"), []string{vectorPath(t, doc)}),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('now').value = %q;
			document.getElementById('require-log').checked = false;
			document.getElementById('verify').click();`, now)),
	); err != nil {
		t.Fatalf("picking %s, %s and %v: %v", keys, doc, addenda, err)
	}
	want, err := json.Marshal(what(doc, keys, now, false) + ", with addenda " + strings.Join(addenda, ", "))
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(p.ctx, chromedp.Poll[foldOutcome](fmt.Sprintf(`(() => {
		const r = document.getElementById('result');
		if (document.getElementById('what').textContent !== %s || !['verdict', 'keys-refused', 'error'].includes(r.dataset.state)) return null;
		return { state: r.dataset.state, verdict: r.dataset.verdict, reason: document.getElementById('reason').textContent,
			physical: document.getElementById('physical').textContent.replace(/^physical: /, ''),
			horizon: document.getElementById('horizon').textContent.replace(/^horizon: /, ''),
			replay: document.getElementById('replay').textContent.replace(/^replay: /, ''),
			folded: [...document.querySelectorAll('#folded li')].map((li) => li.textContent) };
	})()`, want), chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("no result for %s: %v; console:\n%s", want, err, p.console())
	}
	return got
}

// TestPage_FoldsEveryFoldVector: with a certificate vector and addenda
// picked beside it, the page shows the certificate's verdict unchanged,
// the folded physical line, the horizon and replay lines, and each
// addendum's verdict, as the manifest's folds say (TestVectors_Node and
// TestVerifyWithAddenda_PrintsEachFoldVector pin the same for Node and
// lethe-proxy verify).
func TestPage_FoldsEveryFoldVector(t *testing.T) {
	m := readManifest(t)
	if len(m.Folds) == 0 {
		t.Fatal("the manifest lists no folds")
	}
	path := filepath.Join(t.TempDir(), "lethe-verify.html")
	if err := os.WriteFile(path, Page, 0o644); err != nil {
		t.Fatal(err)
	}
	page := open(t, "file://"+path)
	for _, v := range m.Folds {
		var addenda []string
		for _, a := range v.Addenda {
			addenda = append(addenda, a.File)
		}
		got := page.verifyFold(t, v.Keys, v.Certificate, v.Now, addenda)
		if got.State != "verdict" || got.Verdict != v.Verdict {
			t.Errorf("%s: the page shows %s %q (%s), want verdict %s", v.Name, got.State, got.Verdict, got.Reason, v.Verdict)
			continue
		}
		if got.Physical != v.Physical || got.Horizon != v.Horizon || got.Replay != v.Replay {
			t.Errorf("%s: the page's lines\n %q\n %q\n %q\nwant\n %q\n %q\n %q", v.Name, got.Physical, got.Horizon, got.Replay, v.Physical, v.Horizon, v.Replay)
		}
		var want []string
		for _, a := range v.Addenda {
			if a.Verdict != "" {
				want = append(want, "addendum "+a.File+": "+a.Verdict+": ")
			}
		}
		if v.Verdict != "valid" {
			want = append(want, "addenda: none folded: the certificate is not valid")
		}
		if len(got.Folded) != len(want) {
			t.Errorf("%s: the page lists %q, want %q", v.Name, got.Folded, want)
			continue
		}
		for i, w := range want {
			if !strings.HasPrefix(got.Folded[i], w) {
				t.Errorf("%s: the page lists %q, want it to start %q", v.Name, got.Folded[i], w)
			}
		}
	}
}

// TestPage_DroppedReportsBesideACertificateAreItsAddenda: a certificate,
// its keys file and two re-scan reports dropped at once are told apart by
// content: the reports become the certificate's addenda (the newest
// re-scan folded into the physical line), and a report dropped alone
// afterwards is still folded beside the certificate chosen before.
func TestPage_DroppedReportsBesideACertificateAreItsAddenda(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(vectorsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const now = "2026-07-01T00:00:00Z"
	path := filepath.Join(t.TempDir(), "lethe-verify.html")
	if err := os.WriteFile(path, Page, 0o644); err != nil {
		t.Fatal(err)
	}
	page := open(t, "file://"+path)
	dropFiles := func(files [][2]string) {
		t.Helper()
		b, err := json.Marshal(files)
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(page.ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const dt = new DataTransfer();
			for (const [name, text] of %s) dt.items.add(new File([text], name, { type: 'application/json' }));
			document.getElementById('now').value = %q;
			document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
		})()`, b, now))); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(addenda string) foldOutcome {
		t.Helper()
		want, _ := json.Marshal(what("cert.json", "trusted-keys.json", now, false) + ", with addenda " + addenda)
		got, err := chromedp.Run(page.ctx, chromedp.Poll[foldOutcome](fmt.Sprintf(`(() => {
			const r = document.getElementById('result');
			if (document.getElementById('what').textContent !== %s || r.dataset.state !== 'verdict') return null;
			return { verdict: r.dataset.verdict, physical: document.getElementById('physical').textContent,
				folded: [...document.querySelectorAll('#folded li')].map((li) => li.textContent) };
		})()`, want), chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
		if err != nil {
			t.Fatalf("no result with addenda %s: %v; console:\n%s", addenda, err, page.console())
		}
		return got
	}
	dropFiles([][2]string{
		{"rescan-1.json", read("addendum-re-scan-still-holding-bytes.json")},
		{"cert.json", read("cert-v2-pages-scanned-still-hold-the-bytes.json")},
		{"trusted-keys.json", read("keys.json")},
		{"rescan-2.json", read("addendum-re-scan-clean.json")},
	})
	got := lines("rescan-1.json, rescan-2.json")
	if got.Verdict != "valid" || !strings.Contains(got.Physical, "(certified) -> no bytes in 27 pages scanned") || len(got.Folded) != 2 {
		t.Fatalf("dropped together: %+v", got)
	}
	dropFiles([][2]string{{"replay.json", read("addendum-replay.json")}})
	got = lines("replay.json")
	if got.Verdict != "valid" || len(got.Folded) != 1 || !strings.HasPrefix(got.Folded[0], "addendum replay.json: valid: ") {
		t.Fatalf("dropped after: %+v", got)
	}
}
