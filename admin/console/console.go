package console

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/engine"
)

// Engine is what the console asks of the forget engine: a subset of the
// admin API's Engine, so the API's engine serves both.
type Engine interface {
	Preview(ctx context.Context, subject string) (engine.Preview, error)
	Forget(ctx context.Context, subject, confirmToken string, options ...engine.ForgetOptions) (engine.Receipt, error)
	Status(ctx context.Context, id string) (engine.Status, error)
	List(ctx context.Context, f engine.ListFilter) (engine.RequestList, error)
	Certificate(ctx context.Context, id string) ([]byte, error)
	Checkpoint(ctx context.Context) ([]byte, error)
	Consistency(ctx context.Context, oldSize, newSize int64) (engine.ConsistencyProof, error)
	Verify(cert []byte) engine.VerifyResult
}

// Caller is who holds an admin API token.
type Caller struct {
	Name     string
	Operator bool // operators may preview and confirm; auditors only read
}

// Refusal is how the admin API answers an engine error: its HTTP status,
// a message saying what to do, and for a reused confirm token the request
// it opened. Known is false for errors the caller cannot act on.
type Refusal struct {
	Status    int
	Message   string
	RequestID string
	Known     bool
}

// Config wires the console to what the admin API already has.
type Config struct {
	Engine Engine
	// Authenticate returns who holds an admin API token, as of now.
	Authenticate func(token string) (Caller, bool)
	// CheckSubject says what is wrong with a subject, without quoting it
	// (admin.CheckSubject).
	CheckSubject func(subject string) error
	// Explain maps an engine error as the API does.
	Explain func(err error) Refusal
	// SetCaller records the caller's token name for the access log.
	SetCaller func(ctx context.Context, name string)
	// Coverage surveys every store's coverage (the admin API's GET
	// /v1/coverage); nil shows no coverage page.
	Coverage func(ctx context.Context) coverage.Survey
	// Logger receives engine failures, never a subject (default
	// slog.Default()).
	Logger *slog.Logger
	// Now is the sessions' clock (default time.Now).
	Now func() time.Time
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// console holds what the pages share.
type console struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	pages    pages
}

// New returns the console's handler, to be mounted at Prefix. The
// Authenticate, CheckSubject and Explain hooks and the engine must be set.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SetCaller == nil {
		cfg.SetCaller = func(context.Context, string) {}
	}
	c := &console{cfg: cfg, log: cfg.Logger, sessions: newSessions(cfg.Now), pages: parsePages()}
	return c.router()
}

// Prefix is the path the console is mounted at; its links are absolute
// under it.
const Prefix = "/console"

func (c *console) router() http.Handler {
	r := chi.NewRouter()
	r.Use(securityHeaders)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, nil, http.StatusNotFound, "There is no such page in the console.")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, nil, http.StatusMethodNotAllowed, "This page does not take method "+r.Method+".")
	})
	r.Handle("/assets/*", http.StripPrefix(Prefix, http.FileServerFS(assetFiles)))
	r.Get("/login", c.loginPage)
	r.Post("/login", c.sameOrigin(c.login))
	r.Group(func(r chi.Router) {
		r.Use(c.signedIn)
		r.Get("/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, Prefix+"/requests", http.StatusSeeOther)
		})
		r.Post("/logout", c.guarded(c.logout))
		r.Get("/requests", c.requestsPage)
		r.Get("/requests/{id}", c.requestPage)
		r.Get("/requests/{id}/certificate", c.certificateDownload)
		r.Get("/forget", c.forgetPage)
		r.Post("/forget/preview", c.guarded(c.operatorOnly(c.preview)))
		r.Post("/forget/confirm", c.guarded(c.operatorOnly(c.confirm)))
		r.Get("/log", c.logPage)
		r.Get("/log/consistency", c.consistency)
		r.Get("/coverage", c.coveragePage)
	})
	return r
}

// contentPolicy lets pages load the console's own script and stylesheet
// and fetch from the console, and nothing else.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders sets what every answer carries. Pages are never cached:
// they show requests, and a preview shows a subject.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make browsers send "Origin: null"
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
