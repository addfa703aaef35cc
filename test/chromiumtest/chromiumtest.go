// Package chromiumtest starts the headless Chromium the browser tests
// (the console's and the browser verifier's) drive with chromedp. It is
// imported by tests only.
package chromiumtest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds Chromium ($LETHE_CHROMIUM, else chromium on PATH), or skips
// the test; LETHE_REQUIRE_CHROMIUM=1 (scripts/test.sh) makes its absence
// a failure.
func Path(t testing.TB) string {
	t.Helper()
	if path := os.Getenv("LETHE_CHROMIUM"); path != "" {
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("LETHE_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is not on PATH and LETHE_REQUIRE_CHROMIUM=1; install Debian's chromium package (scripts/setup.sh does) or set LETHE_CHROMIUM to a Chromium binary")
	}
	t.Skip("chromium is not on PATH; install Debian's chromium package (scripts/setup.sh does), or set LETHE_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// Tab starts one headless Chromium for the test, bounded to 3 minutes,
// with the options given added to chromedp's defaults, and returns its
// tab and the console messages its pages wrote (for failure messages).
// The browser stops when the test ends.
func Tab(t testing.TB, options ...chromedp.ExecAllocatorOption) (context.Context, func() string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Path(t)))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox itself as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, options...)...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var lines []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			mu.Lock()
			lines = append(lines, m.String())
			mu.Unlock()
		}
	}()
	return ctx, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}
