package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Session lifetimes: a session ends after idleTimeout without a request,
// and in any case maxSessionAge after login.
const (
	idleTimeout   = 30 * time.Minute
	maxSessionAge = 12 * time.Hour
	// maxSessions bounds the sessions kept; at the bound the oldest is
	// ended to make room.
	maxSessions = 10000
)

// cookieName is the session cookie; its value is the random session id.
const cookieName = "lethe_console"

// session is one signed-in browser. It keeps the token it was opened with
// (in memory only) so that each request checks it again.
type session struct {
	token   string
	csrf    string // the anti-forgery token every form of this session carries
	created time.Time
	seen    time.Time
}

// sessions is the in-memory session table, keyed by the SHA-256 of the
// session id, so that a lookup's timing says nothing about the ids held.
// Sessions are not shared between processes: behind a load balancer, pin
// a browser to one proxy (docs/console.md).
type sessions struct {
	now    func() time.Time
	mu     sync.Mutex
	byHash map[[sha256.Size]byte]*session
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byHash: map[[sha256.Size]byte]*session{}}
}

// randomText is n random bytes, base64url.
func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open starts a session for token and returns its id.
func (s *sessions) open(token string) (string, *session) {
	id := randomText(32)
	now := s.now()
	ss := &session{token: token, csrf: randomText(32), created: now, seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	s.byHash[sha256.Sum256([]byte(id))] = ss
	return id, ss
}

// sweep ends expired sessions and, at the bound, the oldest. Callers hold
// mu.
func (s *sessions) sweep(now time.Time) {
	var oldestKey [sha256.Size]byte
	var oldest *session
	for k, ss := range s.byHash {
		if expired(ss, now) {
			delete(s.byHash, k)
			continue
		}
		if oldest == nil || ss.created.Before(oldest.created) {
			oldestKey, oldest = k, ss
		}
	}
	if len(s.byHash) >= maxSessions && oldest != nil {
		delete(s.byHash, oldestKey)
	}
}

func expired(ss *session, now time.Time) bool {
	return now.Sub(ss.seen) > idleTimeout || now.Sub(ss.created) > maxSessionAge
}

// get returns the live session of id and marks it seen.
func (s *sessions) get(id string) (*session, bool) {
	key := sha256.Sum256([]byte(id))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byHash[key]
	if !ok {
		return nil, false
	}
	if expired(ss, now) {
		delete(s.byHash, key)
		return nil, false
	}
	ss.seen = now
	return ss, true
}

// end ends the session of id.
func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byHash, sha256.Sum256([]byte(id)))
}

// sessionCookie is the cookie that carries id; an empty id and a negative
// maxAge delete it. It is Secure when the request came over TLS.
func sessionCookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: cookieName, Value: id, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	}
}

// signedInKey is the context key of the request's signed-in caller.
type signedInKey struct{}

// signedIn is who made a request, and through which session.
type signedIn struct {
	Caller
	id      string
	session *session
}

func callerOf(ctx context.Context) *signedIn {
	s, _ := ctx.Value(signedInKey{}).(*signedIn)
	return s
}

// signedIn lets requests of a live session whose token is still accepted
// through; others are sent to the login page (a GET) or refused (401).
func (c *console) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if who, ok := c.session(r); ok {
			c.cfg.SetCaller(r.Context(), who.Name)
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), signedInKey{}, who)))
			return
		}
		if r.Method == http.MethodGet && r.Header.Get("Accept") != "application/json" {
			http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
			return
		}
		c.renderError(w, r, nil, http.StatusUnauthorized, "You are not signed in, or your session has ended. Sign in again.")
	})
}

// session returns the caller of r's session cookie, if the session is live
// and its token still accepted; otherwise the session is ended.
func (c *console) session(r *http.Request) (*signedIn, bool) {
	cookie, err := r.Cookie(cookieName)
	if err != nil || cookie.Value == "" {
		return nil, false
	}
	ss, ok := c.sessions.get(cookie.Value)
	if !ok {
		return nil, false
	}
	caller, ok := c.cfg.Authenticate(ss.token)
	if !ok {
		c.sessions.end(cookie.Value)
		return nil, false
	}
	return &signedIn{Caller: caller, id: cookie.Value, session: ss}, true
}

func (c *console) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.session(r); ok {
		http.Redirect(w, r, Prefix+"/requests", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", nil, "Sign in", loginView{})
}

// loginView is the login page: a message after a refused token.
type loginView struct{ Problem string }

// maxFormBody bounds a form: a subject, a token or two.
const maxFormBody = 64 << 10

// login opens a session for an accepted admin API token (form field
// token, POST body only).
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil || r.URL.RawQuery != "" {
		c.render(w, r, http.StatusBadRequest, "login", nil, "Sign in", loginView{Problem: "The form could not be read; sign in again from this page."})
		return
	}
	token := r.PostForm.Get("token")
	caller, ok := c.cfg.Authenticate(token)
	if token == "" || !ok {
		c.render(w, r, http.StatusUnauthorized, "login", nil, "Sign in",
			loginView{Problem: "That token is not accepted. Paste an operator's or an auditor's admin API token (an operator creates one with lethe-proxy admin-token)."})
		return
	}
	// The session this browser had ends: an id copied before this login
	// (a leaked or planted cookie) must not outlive it.
	if old, err := r.Cookie(cookieName); err == nil && old.Value != "" {
		c.sessions.end(old.Value)
	}
	id, _ := c.sessions.open(token)
	c.cfg.SetCaller(r.Context(), caller.Name)
	http.SetCookie(w, sessionCookie(r, id, int(maxSessionAge/time.Second)))
	http.Redirect(w, r, Prefix+"/requests", http.StatusSeeOther)
}

func (c *console) logout(w http.ResponseWriter, r *http.Request) {
	c.sessions.end(callerOf(r.Context()).id)
	http.SetCookie(w, sessionCookie(r, "", -1))
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}
