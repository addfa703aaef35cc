// Package webverify is the certificate verifier in the browser: one
// self-contained HTML page, verify.html, on which an auditor picks or
// drops a trusted keys file and a certificate or signed report (with, for
// a certificate, its addenda) and reads the verdict, the reason and what
// the document states (docs/certificate.md, "Verifying in a browser" and
// "Addenda").
//
// The page runs the very modules `node certificate/node/verify.mjs` runs
// (document.mjs and what it imports), on WebCrypto's SHA-256 and Ed25519,
// so its verdicts and reasons are theirs. They are inlined, not loaded:
// Chromium loads no ES module from a file:// page, and the page must work
// when saved and opened offline. verify.html is generated from page.html,
// page.mjs and certificate/node/*.mjs by
//
//	go generate ./certificate/webverify
//
// (which runs `go test -run TestPage_IsCurrent -update`), and
// TestPage_IsCurrent fails when it is stale. The page carries its own
// content security policy, which allows its one inline script and style
// (by hash) and nothing else: it can make no request, so the files it is
// given stay in it.
//
// The proxy's admin listener serves it at /verify without a token: it
// holds no data.
package webverify

import (
	_ "embed"
	"net/http"
	"strings"
)

//go:generate go test -run TestPage_IsCurrent -update .

// Page is verify.html, the whole verifier in one file.
//
//go:embed verify.html
var Page []byte

// policy is the content security policy the page's meta element carries;
// Serve sends it as a header too, with what only a header can say.
var policy = metaPolicy(string(Page)) + "; frame-ancestors 'none'"

// metaPolicy returns the content of the page's Content-Security-Policy
// meta element, or a policy that allows nothing if there is none.
func metaPolicy(page string) string {
	const open = `<meta http-equiv="Content-Security-Policy" content="`
	_, rest, ok := strings.Cut(page, open)
	if !ok {
		return "default-src 'none'"
	}
	content, _, _ := strings.Cut(rest, `"`)
	return content
}

// Serve answers with the page. It reads nothing from the request.
func Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.Write(Page)
}
