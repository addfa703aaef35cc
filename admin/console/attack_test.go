package console_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
)

// TestAttack_Console_LoginRefusesForeignAndOpaqueOrigins: a cross-site
// login form (login CSRF: signing the victim into the attacker's session)
// is refused whatever Origin it carries: none, "null" (a sandboxed frame or
// a data: page), another site, this host on another port, or this host
// spelled with another scheme over TLS; no cookie is set.
func TestAttack_Console_LoginRefusesForeignAndOpaqueOrigins(t *testing.T) {
	rg := newRig(t, cannedEngine())
	u, err := url.Parse(rg.server.URL)
	require.NoError(t, err)
	for _, origin := range []string{"", "null", "https://evil.example", "http://" + u.Hostname() + ":1", "http://" + u.Host + ".evil.example", "file://"} {
		b := rg.visitor(t)
		b.origin = origin
		p := b.post("/console/login", url.Values{"token": {operatorToken}})
		assert.Equal(t, http.StatusForbidden, p.status, "Origin %q", origin)
		assert.Empty(t, p.header.Values("Set-Cookie"), "Origin %q", origin)
	}

	h, err := admin.New(admin.Config{Engine: cannedEngine(), Tokens: testTokens(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/console/login", strings.NewReader(url.Values{"token": {operatorToken}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", strings.Replace(srv.URL, "https://", "http://", 1))
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "an http:// origin posting to the TLS listener")
	assert.Empty(t, res.Header.Values("Set-Cookie"))
}

// TestAttack_Console_LoginNeverAdoptsAPlantedSessionID: a session id set
// in the browser before login (session fixation: an attacker who can
// plant a cookie) is replaced at login by a fresh one, and is never a
// session itself; and a login from a browser that already had a session
// ends that session, so an id that leaked before the login is worthless
// after it.
func TestAttack_Console_LoginNeverAdoptsAPlantedSessionID(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	console, err := url.Parse(rg.server.URL + "/console")
	require.NoError(t, err)
	b.client.Jar.SetCookies(console, []*http.Cookie{{Name: "lethe_console", Value: "planted-by-the-attacker", Path: "/console"}})
	b.login(operatorToken)
	var fresh string
	for _, c := range b.client.Jar.Cookies(console) {
		if c.Name == "lethe_console" {
			fresh = c.Value
		}
	}
	require.NotEmpty(t, fresh)
	assert.NotEqual(t, "planted-by-the-attacker", fresh)

	attacker := rg.visitor(t)
	attacker.client.Jar.SetCookies(console, []*http.Cookie{{Name: "lethe_console", Value: "planted-by-the-attacker", Path: "/console"}})
	assert.Equal(t, "/console/login", attacker.get("/console/requests").location, "the planted id is no session")

	// The same browser signs in again (another token, or the same): the
	// session it had ends.
	leaked := rg.visitor(t)
	leaked.client.Jar.SetCookies(console, []*http.Cookie{{Name: "lethe_console", Value: fresh, Path: "/console"}})
	require.Equal(t, http.StatusOK, leaked.get("/console/requests").status, "a copy of the session id is the session")
	b.login(auditorToken)
	assert.Equal(t, "/console/login", leaked.get("/console/requests").location, "the session the browser had before it signed in again still answers")
}

// TestAttack_Console_NoAnswerIsFramedOrCached: every kind of answer the
// console gives (the login page, a refused form, a page, a redirect, a
// 404, the certificate download, the proof JSON, an asset) forbids being
// framed (clickjacking the confirm button) and being stored by a cache.
func TestAttack_Console_NoAnswerIsFramedOrCached(t *testing.T) {
	eng := cannedEngine()
	eng.cert = []byte(`{"lethe_certificate":1}`)
	rg := newRig(t, eng)
	signedOut := rg.visitor(t)
	b := rg.visitor(t)
	b.login(operatorToken)
	answers := map[string]page{
		"login page":           signedOut.get("/console/login"),
		"signed-out redirect":  signedOut.get("/console/requests"),
		"refused login":        signedOut.post("/console/login", url.Values{"token": {"wrong"}}),
		"requests":             b.get("/console/requests"),
		"forget form":          b.get("/console/forget"),
		"not found":            b.get("/console/no-such-page"),
		"certificate download": b.get("/console/requests/" + testID + "/certificate"),
		"consistency proof":    b.get("/console/log/consistency?old=0&new=0"),
		"refused form":         b.post("/console/forget/preview", url.Values{"subject": {testSubject}}),
	}
	for name, p := range answers {
		assert.Equal(t, "DENY", p.header.Get("X-Frame-Options"), name)
		assert.Contains(t, p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'", name)
		assert.Equal(t, "no-store", p.header.Get("Cache-Control"), name)
		assert.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"), name)
	}
}
