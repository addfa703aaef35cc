package console_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

const (
	operatorToken = "operator-secret-token"
	auditorToken  = "auditor-secret-token"
	testSubject   = "alice@example.com"
)

func testTokens() []admin.Token {
	return []admin.Token{
		{Name: "ops-1", Role: admin.RoleOperator, SHA256: admin.HashToken(operatorToken)},
		{Name: "audit-1", Role: admin.RoleAuditor, SHA256: admin.HashToken(auditorToken)},
	}
}

// syncBuffer is a log sink safe for a server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is the admin listener, console included, over a fake engine, with
// its log at debug level, and every URL a client asked for or was sent
// to.
type rig struct {
	engine *fakeEngine
	server *httptest.Server
	logs   *syncBuffer

	mu   sync.Mutex
	urls []string
}

func newRig(t *testing.T, eng *fakeEngine, configure ...func(*admin.Config)) *rig {
	t.Helper()
	logs := &syncBuffer{}
	cfg := admin.Config{Engine: eng, Tokens: testTokens(),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, f := range configure {
		f(&cfg)
	}
	h, err := admin.New(cfg)
	require.NoError(t, err)
	rg := &rig{engine: eng, logs: logs}
	rg.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rg.mu.Lock()
		rg.urls = append(rg.urls, r.URL.String())
		rg.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(rg.server.Close)
	return rg
}

// visitor is a browser-like client with a cookie jar that sends the Origin a browser
// sends, and does not follow redirects (the test reads them).
type visitor struct {
	t      *testing.T
	rig    *rig
	client *http.Client
	origin string
}

func (rg *rig) visitor(t *testing.T) *visitor {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &visitor{t: t, rig: rg, origin: rg.server.URL, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer.
type page struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (b *visitor) get(path string) page {
	b.t.Helper()
	return b.do(http.MethodGet, path, nil)
}

func (b *visitor) post(path string, form url.Values) page {
	b.t.Helper()
	return b.do(http.MethodPost, path, form)
}

func (b *visitor) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.rig.server.URL+path, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost && b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	res, err := b.client.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(b.t, err)
	loc := res.Header.Get("Location")
	if loc != "" {
		b.rig.mu.Lock()
		b.rig.urls = append(b.rig.urls, loc)
		b.rig.mu.Unlock()
	}
	return page{status: res.StatusCode, body: string(out), location: loc, header: res.Header}
}

// login signs in with token and returns the session's CSRF token.
func (b *visitor) login(token string) string {
	b.t.Helper()
	p := b.post("/console/login", url.Values{"token": {token}})
	require.Equal(b.t, http.StatusSeeOther, p.status, p.body)
	require.Equal(b.t, "/console/requests", p.location)
	return b.csrf("/console/forget") // a page that asks the engine nothing
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the anti-forgery token on the page at path.
func (b *visitor) csrf(path string) string {
	b.t.Helper()
	p := b.get(path)
	require.Equal(b.t, http.StatusOK, p.status, p.body)
	m := csrfField.FindStringSubmatch(p.body)
	require.NotNil(b.t, m, "no csrf field on %s", path)
	return m[1]
}

// TestLogin_SessionCookieHoldsARandomIDNotTheToken: an accepted token
// opens a session whose cookie is HttpOnly, SameSite=Strict, scoped to
// the console and holds a random id, never the token; the pages then
// answer, and a wrong token is refused with no cookie.
func TestLogin_SessionCookieHoldsARandomIDNotTheToken(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)

	refused := b.post("/console/login", url.Values{"token": {"not-a-token"}})
	assert.Equal(t, http.StatusUnauthorized, refused.status)
	assert.Empty(t, refused.header.Values("Set-Cookie"))
	assert.Contains(t, refused.body, "That token is not accepted")

	p := b.post("/console/login", url.Values{"token": {operatorToken}})
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	cookies := p.header.Values("Set-Cookie")
	require.Len(t, cookies, 1)
	c, err := http.ParseSetCookie(cookies[0])
	require.NoError(t, err)
	assert.Equal(t, "lethe_console", c.Name)
	assert.True(t, c.HttpOnly, "HttpOnly")
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/console", c.Path)
	assert.False(t, c.Secure, "a cookie over plain HTTP cannot be Secure")
	assert.GreaterOrEqual(t, len(c.Value), 43, "32 random bytes")
	assert.NotContains(t, cookies[0], operatorToken)
	assert.NotContains(t, cookies[0], admin.HashToken(operatorToken))

	list := b.get("/console/requests")
	require.Equal(t, http.StatusOK, list.status)
	assert.Contains(t, list.body, `data-request="`+testID+`"`)
	assert.Contains(t, list.body, "OVERDUE")
	assert.Contains(t, list.body, "ops-1 (operator)")
	assert.Equal(t, "no-store", list.header.Get("Cache-Control"))
	assert.Contains(t, list.header.Get("Content-Security-Policy"), "script-src 'self'")
}

// TestLogin_CookieIsSecureOverTLS: over TLS the session cookie is Secure.
func TestLogin_CookieIsSecureOverTLS(t *testing.T) {
	h, err := admin.New(admin.Config{Engine: cannedEngine(), Tokens: testTokens(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/console/login", strings.NewReader(url.Values{"token": {operatorToken}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	res, err := client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	c, err := http.ParseSetCookie(res.Header.Get("Set-Cookie"))
	require.NoError(t, err)
	assert.True(t, c.Secure, "Secure over TLS")
}

// TestPages_SignedOutAreSentToLogin: without a session every page sends
// the browser to the login page, and the log page's proof route answers
// 401; nothing reaches the engine.
func TestPages_SignedOutAreSentToLogin(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	for _, path := range []string{"/console/", "/console/requests", "/console/requests/" + testID, "/console/requests/" + testID + "/certificate", "/console/forget", "/console/log"} {
		p := b.get(path)
		assert.Equal(t, http.StatusSeeOther, p.status, path)
		assert.Equal(t, "/console/login", p.location, path)
	}
	req, err := http.NewRequest(http.MethodGet, rg.server.URL+"/console/log/consistency?old=1&new=2", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	res, err := b.client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	// A forged cookie is no session either.
	u, _ := url.Parse(rg.server.URL + "/console")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: "lethe_console", Value: "forged", Path: "/console"}})
	assert.Equal(t, "/console/login", b.get("/console/requests").location)
	assert.Empty(t, rg.engine.Calls())
}

// TestPost_RefusedWithoutTheSessionsCSRFTokenOrFromAnotherOrigin: a POST
// is refused (403), before the engine is asked, without the session's
// CSRF token, with another session's, from another origin, or with no
// Origin at all; the login form too checks the origin.
func TestPost_RefusedWithoutTheSessionsCSRFTokenOrFromAnotherOrigin(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	other := rg.visitor(t)
	otherCSRF := other.login(operatorToken)
	require.NotEqual(t, csrf, otherCSRF)

	cases := []struct {
		name   string
		origin string
		form   url.Values
	}{
		{"no csrf token", b.origin, url.Values{"subject": {testSubject}}},
		{"another session's token", b.origin, url.Values{"subject": {testSubject}, "csrf": {otherCSRF}}},
		{"another origin", "https://evil.example", url.Values{"subject": {testSubject}, "csrf": {csrf}}},
		{"no origin", "", url.Values{"subject": {testSubject}, "csrf": {csrf}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.origin = tc.origin
			for _, path := range []string{"/console/forget/preview", "/console/forget/confirm", "/console/logout"} {
				form := url.Values{}
				for k, v := range tc.form {
					form[k] = v
				}
				form.Set("confirm_token", "tok-123")
				p := b.post(path, form)
				assert.Equal(t, http.StatusForbidden, p.status, "%s %s", path, p.body)
			}
		})
	}
	b.origin = rg.server.URL
	assert.Empty(t, rg.engine.Calls(), "no refused POST reaches the engine")
	assert.Equal(t, http.StatusOK, b.get("/console/forget").status, "the refused logout left the session open")

	fresh := rg.visitor(t)
	fresh.origin = "https://evil.example"
	p := fresh.post("/console/login", url.Values{"token": {operatorToken}})
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Empty(t, p.header.Values("Set-Cookie"))

	// With its own token, from its own origin, the form goes through.
	ok := b.post("/console/forget/preview", url.Values{"subject": {testSubject}, "csrf": {csrf}})
	assert.Equal(t, http.StatusOK, ok.status, ok.body)
}

// TestAuditor_SeesNoConfirmAndIsRefused403: an auditor's session reads the
// requests, but the new-forget page offers no form, and a preview or
// confirm POST from it, with a valid CSRF token, is refused 403 without
// reaching the engine.
func TestAuditor_SeesNoConfirmAndIsRefused403(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	csrf := b.login(auditorToken)
	assert.Equal(t, http.StatusOK, b.get("/console/requests").status)

	form := b.get("/console/forget")
	require.Equal(t, http.StatusOK, form.status)
	assert.Contains(t, form.body, `id="auditor-note"`)
	assert.NotContains(t, form.body, "/console/forget/preview")
	assert.NotContains(t, form.body, "/console/forget/confirm")

	for _, path := range []string{"/console/forget/preview", "/console/forget/confirm"} {
		p := b.post(path, url.Values{"subject": {testSubject}, "confirm_token": {"tok-123"}, "csrf": {csrf}})
		assert.Equal(t, http.StatusForbidden, p.status, path)
		assert.Contains(t, p.body, "auditor")
	}
	for _, call := range rg.engine.Calls() {
		assert.NotContains(t, call, "Preview")
		assert.NotContains(t, call, "Forget")
	}
}

// TestForget_SubjectNeverInAURLOrALogLine: a whole forget (login,
// preview, confirm, the request's page, the certificate) sends the
// subject in POST bodies only: it is in no URL requested or redirected
// to, and in no log line, even when the engine fails with an error that
// quotes it.
func TestForget_SubjectNeverInAURLOrALogLine(t *testing.T) {
	eng := cannedEngine()
	rg := newRig(t, eng)
	b := rg.visitor(t)
	csrf := b.login(operatorToken)

	require.Equal(t, http.StatusOK, b.get("/console/forget").status)
	preview := b.post("/console/forget/preview", url.Values{"subject": {testSubject}, "csrf": {csrf}})
	require.Equal(t, http.StatusOK, preview.status, preview.body)
	assert.Contains(t, preview.body, `data-rows="3"`)
	assert.Contains(t, preview.body, `id="confirm"`)
	receipt := b.post("/console/forget/confirm", url.Values{"subject": {testSubject}, "confirm_token": {"tok-123"}, "csrf": {csrf}})
	require.Equal(t, http.StatusAccepted, receipt.status, receipt.body)
	assert.Contains(t, receipt.body, "/console/requests/"+testID)
	assert.NotContains(t, receipt.body, testSubject)
	assert.Equal(t, http.StatusOK, b.get("/console/requests/"+testID).status)

	eng.err = errorQuoting(testSubject)
	failed := b.post("/console/forget/preview", url.Values{"subject": {testSubject}, "csrf": {csrf}})
	assert.Equal(t, http.StatusInternalServerError, failed.status)
	assert.NotContains(t, failed.body, testSubject)

	assert.Contains(t, eng.Calls(), "Preview "+testSubject)
	assert.Contains(t, eng.Calls(), "Forget "+testSubject+" tok-123 nothing_found=false")
	rg.mu.Lock()
	defer rg.mu.Unlock()
	for _, u := range rg.urls {
		assert.NotContains(t, u, "alice", "URL %s", u)
		assert.NotContains(t, u, url.QueryEscape(testSubject), "URL %s", u)
	}
	logs := rg.logs.String()
	require.Contains(t, logs, `"route":"/console/forget/preview"`, "the access log records the route pattern")
	require.Contains(t, logs, `"token":"ops-1"`, "the access log names the token")
	require.Contains(t, logs, "[subject]", "the engine's failure is logged, blanked")
	assert.NotContains(t, logs, "alice")
	assert.NotContains(t, logs, operatorToken)
}

type errorQuoting string

func (e errorQuoting) Error() string { return `pgstore: delete failed for "` + string(e) + `"` }

// TestForget_SubjectInAQueryStringIsRefused: a form posted with a query
// string is refused, so a subject put in a URL is not acted on.
func TestForget_SubjectInAQueryStringIsRefused(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	p := b.post("/console/forget/preview?subject=x", url.Values{"subject": {testSubject}, "csrf": {csrf}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Empty(t, rg.engine.Calls())
}

// TestPreview_NothingFoundWarnsAndConfirmsWithNothingFound: a preview
// that found nothing shows the near-miss warning, and its confirm form
// carries nothing_found, which reaches the engine.
func TestPreview_NothingFoundWarnsAndConfirmsWithNothingFound(t *testing.T) {
	eng := cannedEngine()
	eng.preview = engine.Preview{
		Layers:       []engine.LayerPreview{{Store: "postgres", Table: "public.docs"}},
		NothingFound: true, NearMisses: &engine.NearMisses{LedgerRecords: 2, Records: 1},
		Warning: "No records of this subject were found in any layer", Token: "tok-nf", ExpiresAt: t0,
	}
	rg := newRig(t, eng)
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	p := b.post("/console/forget/preview", url.Values{"subject": {testSubject}, "csrf": {csrf}})
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, `id="near-miss"`)
	assert.Contains(t, p.body, "Near misses: 2 in the ledger, 1 in the stores")
	assert.Contains(t, p.body, `name="nothing_found" value="true"`)
	r := b.post("/console/forget/confirm", url.Values{"subject": {testSubject}, "confirm_token": {"tok-nf"}, "nothing_found": {"true"}, "csrf": {csrf}})
	require.Equal(t, http.StatusAccepted, r.status, r.body)
	assert.Contains(t, eng.Calls(), "Forget "+testSubject+" tok-nf nothing_found=true")
}

// TestPreview_BadSubjectSaysWhyWithoutQuotingIt: a subject the API would
// refuse (a trailing newline) is refused with the API's reason, and the
// engine is not asked.
func TestPreview_BadSubjectSaysWhyWithoutQuotingIt(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	p := b.post("/console/forget/preview", url.Values{"subject": {testSubject + "\n"}, "csrf": {csrf}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Contains(t, p.body, "control character (U&#43;000A)")
	assert.Empty(t, rg.engine.Calls())
}

// TestConfirm_ReusedTokenLinksTheRequestItOpened: an engine refusal reads
// as the API's message, with a link to the request a reused token opened.
func TestConfirm_ReusedTokenLinksTheRequestItOpened(t *testing.T) {
	eng := cannedEngine()
	rg := newRig(t, eng)
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	eng.err = &engine.UsedTokenError{RequestID: testID}
	p := b.post("/console/forget/confirm", url.Values{"subject": {testSubject}, "confirm_token": {"tok-123"}, "csrf": {csrf}})
	assert.Equal(t, http.StatusConflict, p.status)
	assert.Contains(t, p.body, "the confirm token was already used")
	assert.Contains(t, p.body, `href="/console/requests/`+testID+`"`)
}

// TestSession_EndsWhenItsTokenIsRemovedAndAtLogout: a session lasts only
// while its token is in the tokens file, and ends at logout.
func TestSession_EndsWhenItsTokenIsRemovedAndAtLogout(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, admin.AppendToken(file, testTokens()[0]))
	require.NoError(t, admin.AppendToken(file, testTokens()[1]))
	rg := newRig(t, cannedEngine(), func(c *admin.Config) { c.TokensFile = file })

	ops := rg.visitor(t)
	ops.login(operatorToken)
	auditor := rg.visitor(t)
	auditorCSRF := auditor.login(auditorToken)

	require.NoError(t, os.Remove(file))
	require.NoError(t, admin.AppendToken(file, testTokens()[1]))
	assert.Equal(t, "/console/login", ops.get("/console/requests").location, "the operator's token was removed")
	assert.Equal(t, http.StatusOK, auditor.get("/console/requests").status)

	consoleURL, err := url.Parse(rg.server.URL + "/console")
	require.NoError(t, err)
	kept := auditor.client.Jar.Cookies(consoleURL)
	out := auditor.post("/console/logout", url.Values{"csrf": {auditorCSRF}})
	require.Equal(t, http.StatusSeeOther, out.status)
	assert.Equal(t, "/console/login", auditor.get("/console/requests").location, "logged out")
	auditor.client.Jar.SetCookies(consoleURL, kept)
	assert.Equal(t, "/console/login", auditor.get("/console/requests").location, "the session's cookie, kept, opens nothing")
}

// TestRequestPage_FollowsARunningForgetThenShowsItsCertificate: a running
// request's page is marked for following, per layer; a completed one
// shows the proxy's verdict, the evidence, a download of the exact bytes
// and the link to the browser verifier.
func TestRequestPage_FollowsARunningForgetThenShowsItsCertificate(t *testing.T) {
	eng := cannedEngine()
	rg := newRig(t, eng)
	b := rg.visitor(t)
	b.login(operatorToken)
	running := b.get("/console/requests/" + testID)
	require.Equal(t, http.StatusOK, running.status)
	assert.Contains(t, running.body, `data-running="true"`)
	assert.Contains(t, running.body, `data-deleted="1" data-residual="2"`)
	assert.Contains(t, running.body, `<noscript><meta http-equiv="refresh"`)
	assert.NotContains(t, running.body, `id="certificate"`)

	eng.status.Status = ledger.ForgetCompleted
	eng.cert = []byte(`{"not": "a certificate"}`)
	done := b.get("/console/requests/" + testID)
	require.Equal(t, http.StatusOK, done.status)
	assert.NotContains(t, done.body, `data-running`)
	assert.Contains(t, done.body, `data-verdict="valid"`)
	assert.Contains(t, done.body, `href="/verify"`)
	assert.Contains(t, done.body, `href="/console/requests/`+testID+`/certificate"`)

	dl := b.get("/console/requests/" + testID + "/certificate")
	require.Equal(t, http.StatusOK, dl.status)
	assert.Equal(t, string(eng.cert), dl.body, "byte for byte")
	assert.Equal(t, `attachment; filename="certificate-`+testID+`.json"`, dl.header.Get("Content-Disposition"))

	bad := b.get("/console/requests/alice@example.com")
	assert.Equal(t, http.StatusBadRequest, bad.status)
}

// TestLogPage_ShowsTheCheckpointForTheBrowserToCheck: the log page shows
// the checkpoint's size and root for the script, and the proof route
// answers the engine's consistency proof to a session.
func TestLogPage_ShowsTheCheckpointForTheBrowserToCheck(t *testing.T) {
	rg := newRig(t, cannedEngine())
	b := rg.visitor(t)
	b.login(auditorToken)
	p := b.get("/console/log")
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, `data-origin="lethe.example/log" data-size="0" data-root="47DEQpj8HBSa&#43;/TImW&#43;5JCeuQeRkm5NMpJWZG3hSuFU="`)
	proof := b.get("/console/log/consistency?old=1&new=3")
	require.Equal(t, http.StatusOK, proof.status)
	assert.JSONEq(t, `{"old_size":1,"new_size":3,"hashes":null}`, proof.body)
	assert.Equal(t, http.StatusBadRequest, b.get("/console/log/consistency?old=3&new=1").status)
}

// TestForget_EscapedSubjectInAnEngineErrorIsBlanked: an engine error that
// quotes the subject with %q (o\"brïen) is logged with neither spelling.
func TestForget_EscapedSubjectInAnEngineErrorIsBlanked(t *testing.T) {
	const subject = `o"brïen@example.com`
	eng := cannedEngine()
	eng.err = fmt.Errorf("store: no rows for %q", subject)
	rg := newRig(t, eng)
	b := rg.visitor(t)
	csrf := b.login(operatorToken)
	failed := b.post("/console/forget/preview", url.Values{"subject": {subject}, "csrf": {csrf}})
	assert.Equal(t, http.StatusInternalServerError, failed.status)
	rg.mu.Lock()
	defer rg.mu.Unlock()
	logs := rg.logs.String()
	require.Contains(t, logs, "[subject]", "the engine's failure is logged, blanked")
	assert.NotContains(t, logs, "brïen")
	assert.NotContains(t, logs, `br\u00ef`)
}
