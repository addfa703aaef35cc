package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/chromiumtest"
)

// The console end to end in headless Chromium, over a real engine (a
// SQLite ledger, a signing key, a transparency log) whose one layer is an
// in-memory table: what a privacy officer and an auditor do, click by
// click, with the page's own script.

// memLayer is a table of records in memory. Its deletes of gated's
// records wait for release, so a test sees that forget while it runs.
type memLayer struct {
	gated   string
	release chan struct{}
	mu      sync.Mutex
	records map[string]string // id → subject
}

func (l *memLayer) Store() ledger.Store { return ledger.StorePostgres }
func (l *memLayer) Name() string        { return "public.docs" }

func (l *memLayer) Matching(ctx context.Context, subject string, ids []string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id, s := range l.records {
		if s == subject {
			out = append(out, id)
		}
	}
	return out, nil
}

func (l *memLayer) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	if subject == l.gated {
		select {
		case <-l.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	gone, err := l.Matching(ctx, subject, ids)
	if err != nil {
		return nil, err
	}
	if err := beforeCommit(gone); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range gone {
		delete(l.records, id)
	}
	return gone, nil
}

func (l *memLayer) Residual(ctx context.Context, subject string, ids []string) (connector.Absence, error) {
	left, err := l.Matching(ctx, subject, ids)
	return connector.Absence{Residual: int64(len(left)), Method: "in-memory scan", Queries: []string{"records whose subject is $1"}}, err
}

func (l *memLayer) Cleanup(ctx context.Context) error { return nil }

func (l *memLayer) NearMisses(ctx context.Context, subject string, variants []string) (int64, error) {
	return 0, nil
}

// screenshot saves the page as docs/console/NAME.png when
// LETHE_CONSOLE_SCREENSHOTS=1 (how docs/console.md's pictures are made).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("LETHE_CONSOLE_SCREENSHOTS") != "1" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "console", name+".png"), png, 0o644))
}

// poll waits for the page to make expression true.
func poll(t *testing.T, ctx context.Context, console func() string, what, expression string) {
	t.Helper()
	var err error
	// A poll started while the tab navigates ends with the old document;
	// it is started again on the new one.
	for range 20 {
		if _, err = chromedp.Run(ctx, chromedp.Poll[bool](expression, chromedp.WithPollingTimeout(30*time.Second))); err == nil ||
			!navigating(err) {
			break
		}
	}
	if err != nil {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\npage: %s\nconsole:\n%s", what, err, html, console())
	}
}

// TestConsole_ForgetEndToEndInChromium: an operator signs in, previews a
// subject, confirms, watches the forget run and end (the page follows it
// by itself), downloads the certificate and verifies it in the browser
// verifier against the operator's keys file; the transparency log page
// keeps the checkpoint and, after the next forget, checks the log's
// consistency proof itself, and says so when the kept checkpoint is not
// a prefix of the log. An auditor signs in, sees the request and no
// confirm.
func TestConsole_ForgetEndToEndInChromium(t *testing.T) {
	layer := &memLayer{gated: testSubject, release: make(chan struct{}),
		records: map[string]string{"doc-1": testSubject, "doc-2": testSubject, "doc-3": "bob@example.com"}}
	rig := enginetest.New(t, time.Hour, layer)
	for _, id := range []string{"doc-1", "doc-2"} {
		rig.Record(t, testSubject, ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: id})
	}
	// An earlier forget and its re-check: the log the browser first sees
	// is not empty, and its size is not a power of two, so the
	// consistency proof it later checks is a real one, of RFC 9162's
	// longer branch.
	bob := rig.Forget(t, "bob@example.com")
	_, err := rig.Engine.Reverify(context.Background(), bob, "bob@example.com")
	require.NoError(t, err)
	logs := &syncBuffer{}
	h, err := admin.New(admin.Config{Engine: rig.Engine, Tokens: testTokens(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	dir := t.TempDir()
	keysJSON, err := json.Marshal(rig.Keys)
	require.NoError(t, err)
	keysFile := filepath.Join(dir, "trusted-keys.json")
	require.NoError(t, os.WriteFile(keysFile, keysJSON, 0o644))

	ctx, console := chromiumtest.Tab(t, chromedp.WindowSize(1200, 900))
	downloads := filepath.Join(dir, "downloads")
	require.NoError(t, os.Mkdir(downloads, 0o755))
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	_, err = chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: downloads, EventsEnabled: new(true),
	})
	require.NoError(t, err)

	// The transparency log, before: this browser keeps its checkpoint.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/requests")))
	poll(t, ctx, console, "the login page", `location.pathname === '/console/login'`)
	screenshot(t, ctx, "login")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), operatorToken),
		chromedp.Click(chromedp.CSS("#sign-in")),
	))
	poll(t, ctx, console, "signed in", `location.pathname === '/console/requests' && document.getElementById('caller') !== null`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/log")))
	poll(t, ctx, console, "the log's first checkpoint kept", `document.getElementById('consistency').dataset.state === 'first'`)
	firstSize, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('checkpoint').dataset.size`))
	require.NoError(t, err)
	require.Equal(t, "3", firstSize, "the earlier forget's two events and its re-check")

	// Preview and confirm.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/forget")))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#subject"), testSubject),
		chromedp.Click(chromedp.CSS("#preview")),
	))
	poll(t, ctx, console, "the preview", `document.querySelector('#layers tr[data-table="public.docs"]')?.dataset.rows === '2'`)
	screenshot(t, ctx, "preview")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm"))))
	poll(t, ctx, console, "the receipt", `document.getElementById('subject-secret') !== null`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#follow"))))

	// It runs until the layer's delete is released; the page follows it.
	poll(t, ctx, console, "the running request", `document.getElementById('progress')?.dataset.running === 'true'`)
	// The page reads itself again while the forget runs, and goes on.
	poll(t, ctx, console, "the running request followed", `Number(document.querySelector('main').dataset.polls) >= 2 && document.getElementById('progress').dataset.running === 'true'`)
	screenshot(t, ctx, "progress")
	requestPath, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	require.NoError(t, err)
	close(layer.release)
	poll(t, ctx, console, "the certificate, without a reload", `document.getElementById('certificate')?.dataset.verdict === 'valid' && performance.getEntriesByType('navigation').length === 1 && location.pathname === `+fmt.Sprintf("%q", requestPath))
	deleted, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#layers tr[data-table="public.docs"]').dataset.deleted`))
	require.NoError(t, err)
	require.Equal(t, "2", deleted)
	screenshot(t, ctx, "certificate")

	// Download it, byte for byte as the engine keeps it.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#download"))))
	var downloaded string
	for ev, err := range progress {
		require.NoError(t, err)
		if ev.State == browser.DownloadProgressStateCompleted {
			downloaded = filepath.Join(downloads, ev.GUID)
			break
		}
	}
	got, err := os.ReadFile(downloaded)
	require.NoError(t, err)
	id := strings.TrimPrefix(requestPath, "/console/requests/")
	want, err := rig.Engine.Certificate(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "the downloaded certificate is the engine's, byte for byte")

	// Verify it in the browser verifier, following the page's link.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#verify-link"))))
	poll(t, ctx, console, "the verifier page", `document.getElementById('result')?.dataset.state === 'idle'`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#keys"), []string{keysFile}),
		chromedp.SetUploadFiles(chromedp.CSS("#document"), []string{downloaded}),
		chromedp.Click(chromedp.CSS("#verify")),
	))
	poll(t, ctx, console, "the verifier's verdict", `document.getElementById('result').dataset.state === 'verdict'`)
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('result').dataset.verdict + ': ' + document.getElementById('reason').textContent`))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(verdict, "valid"), "the browser verifier says %s", verdict)

	// The log grew by this forget: the log page checks the proof itself.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/log")))
	poll(t, ctx, console, "the log's consistency checked", `document.getElementById('consistency').dataset.state === 'consistent'`)
	said, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('consistency').textContent`))
	require.NoError(t, err)
	require.Contains(t, said, "saw it at 3 records (now 5)")
	screenshot(t, ctx, "log")
	// A kept checkpoint the log does not extend (another root at a
	// smaller size) is called out: at size 3 the proof's old root is
	// wrong, at size 1 (a power of two, whose root starts the proof) the
	// new one.
	for _, size := range []int{3, 1} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const cp = document.getElementById('checkpoint');
			localStorage.setItem('lethe.console.checkpoint:' + cp.dataset.origin, JSON.stringify({ size: %d, root: btoa('x'.repeat(32)) }));
		})()`, size)), chromedp.Reload()))
		poll(t, ctx, console, fmt.Sprintf("a forged kept checkpoint of size %d refused", size), `document.getElementById('consistency').dataset.state === 'inconsistent'`)
	}

	// The requests page lists it; an auditor sees it, and no confirm.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/requests")))
	poll(t, ctx, console, "the request listed", fmt.Sprintf(`document.querySelector('tr[data-request=%q]')?.dataset.status === 'completed'`, id))
	screenshot(t, ctx, "requests")
	require.NoError(t, chromedp.Do(ctx, chromedp.Submit(chromedp.CSS("form.who"))))
	poll(t, ctx, console, "signed out", `location.pathname === '/console/login'`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), auditorToken),
		chromedp.Click(chromedp.CSS("#sign-in")),
	))
	poll(t, ctx, console, "the auditor signed in", `document.getElementById('caller')?.dataset.role === 'auditor'`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/forget")))
	poll(t, ctx, console, "no confirm for an auditor", `document.getElementById('auditor-note') !== null && document.querySelector('form[action$="/forget/preview"], #confirm') === null`)

	require.NotContains(t, logs.String(), testSubject, "the subject is in no log line")
}

// navigating reports whether err is Chromium saying that the document an
// evaluation ran in went away.
func navigating(err error) bool {
	for _, s := range []string{"navigated or closed", "context was destroyed", "Cannot find context"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}
