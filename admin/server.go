package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/lethe-privacy/lethe/admin/console"
	"github.com/lethe-privacy/lethe/certificate/webverify"
)

// DefaultAddr is where the API listens unless told otherwise: loopback
// only, so that exposing it is a decision.
const DefaultAddr = "127.0.0.1:7070"

// Config wires the API.
type Config struct {
	Engine Engine
	// Tokens are the accepted bearer tokens (LoadTokens reads them from
	// the tokens file); there must be at least one.
	Tokens []Token
	// TokensFile, when set, is the file Tokens were read from. It is read
	// again at each request that presents a token, so that a token added
	// to it is accepted, and one removed refused, without a restart. A
	// file that cannot be read or used leaves the tokens in force as they
	// were, and is logged as an error until it is fixed.
	TokensFile string
	// Ready reports whether the proxy can serve; /readyz answers 503 with
	// its error's text (keep it free of secrets: /readyz needs no token).
	// Nil means always ready.
	Ready func(context.Context) error
	// Metrics returns series the proxy adds to /metrics, keyed by series
	// name with optional labels, e.g. "lethe_capture_refused_total" or
	// `lethe_ledger_pending{store="postgres"}`. Names ending in _total
	// are exposed as counters, the others as gauges. Nil adds none.
	Metrics func() map[string]float64
	// Coverage is what GET /v1/coverage and the console's coverage page
	// read; its zero value answers no stores.
	Coverage CoverageConfig
	// Logger receives the access log and engine failures (default
	// slog.Default()).
	Logger *slog.Logger
}

// server holds what the handlers share.
type server struct {
	engine   Engine
	tokens   func() []credential // the accepted tokens, as of now
	ready    func(context.Context) error
	extra    func() map[string]float64
	log      *slog.Logger
	requests requestCounter
	// coverageCfg is what GET /v1/coverage reads.
	coverageCfg CoverageConfig
}

// New returns the API's handler. It fails if the engine is missing or the
// tokens are unusable.
func New(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return s.router(), nil
}

func newServer(cfg Config) (*server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("admin: Config.Engine is nil; the API needs the forget engine")
	}
	creds, err := credentials(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	s := &server{engine: cfg.Engine, ready: cfg.Ready, extra: cfg.Metrics, log: cfg.Logger, coverageCfg: cfg.Coverage}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.tokens = func() []credential { return creds }
	if cfg.TokensFile != "" {
		s.tokens = (&tokensFile{path: cfg.TokensFile, log: s.log, creds: creds}).current
	}
	return s, nil
}

// route is one API route: who may call it (nil roles: anyone, no token)
// and what answers.
type route struct {
	method  string
	pattern string
	roles   []Role
	handler http.HandlerFunc
}

// routes lists the API; docs/openapi.yaml documents the same set (a test
// checks it). Subjects travel in POST bodies only.
func (s *server) routes() []route {
	operator := []Role{RoleOperator}
	reader := []Role{RoleOperator, RoleAuditor}
	return []route{
		{http.MethodGet, "/healthz", nil, s.healthz},
		{http.MethodGet, "/readyz", nil, s.readyz},
		{http.MethodGet, "/metrics", reader, s.metrics},
		{http.MethodGet, "/v1/whoami", reader, s.whoami},
		// The browser verifier: a static page holding no data, so no token.
		{http.MethodGet, "/verify", nil, webverify.Serve},

		{http.MethodPost, "/v1/forget/preview", operator, s.preview},
		{http.MethodPost, "/v1/forget", operator, s.forget},
		{http.MethodGet, "/v1/forget", reader, s.list},
		{http.MethodGet, "/v1/forget/{id}", reader, s.status},
		{http.MethodGet, "/v1/forget/{id}/certificate", reader, s.certificate},
		{http.MethodPost, "/v1/forget/{id}/reverify", operator, s.reverify},
		{http.MethodPost, "/v1/tombstones/lift", operator, s.lift},
		{http.MethodPost, "/v1/verify", reader, s.verify},

		{http.MethodGet, "/v1/log/checkpoint", reader, s.checkpoint},
		{http.MethodGet, "/v1/log/inclusion", reader, s.inclusion},
		{http.MethodGet, "/v1/log/consistency", reader, s.consistency},

		{http.MethodGet, "/v1/coverage", reader, s.coverage},
	}
}

func (s *server) router() *chi.Mux {
	r := chi.NewRouter()
	r.Use(s.observe)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such route; see docs/openapi.yaml")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "this route does not take method "+r.Method+"; see docs/openapi.yaml")
	})
	for _, rt := range s.routes() {
		var h http.Handler = rt.handler
		if rt.roles != nil {
			h = s.authorize(rt.roles...)(h)
		}
		r.Method(rt.method, rt.pattern, h)
	}
	// The privacy officer's console: HTML pages over the same engine and
	// tokens (docs/console.md), not part of the API's contract.
	r.Mount(console.Prefix, s.consoleHandler())
	return r
}

// Serve runs the API on addr (DefaultAddr if empty) until ctx ends, then
// shuts down gracefully. With tlsCertFile and tlsKeyFile (PEM) it serves
// HTTPS. A non-loopback address without TLS is allowed (a TLS-terminating
// sidecar may front it) but logged as a warning: tokens and subjects
// would cross the network in clear text.
func Serve(ctx context.Context, cfg Config, addr, tlsCertFile, tlsKeyFile string) error {
	l, err := Listen(cfg, addr, tlsCertFile, tlsKeyFile)
	if err != nil {
		return err
	}
	return l.Serve(ctx)
}

// Listener is the API bound to its address, with its configuration and
// TLS files checked: what Serve does before serving, for a start that
// must find every fault before it does anything it would have to undo.
type Listener struct {
	s   *server
	ln  net.Listener
	tls *tls.Config
}

// Listen binds addr (DefaultAddr if empty) and checks cfg and the TLS
// files as Serve does; Serve on the result runs the API, Close gives the
// address back without serving.
func Listen(cfg Config, addr, tlsCertFile, tlsKeyFile string) (*Listener, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listening on %s: %w (is another process using it? change the admin listen address)", addr, err)
	}
	l, err := listenOn(cfg, ln, tlsCertFile, tlsKeyFile)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return l, nil
}

// Close closes the listener of an API that is not served.
func (l *Listener) Close() error { return l.ln.Close() }

// Addr is the address the API is bound to.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// serveOn is Serve on a listener it takes over and closes.
func serveOn(ctx context.Context, cfg Config, ln net.Listener, tlsCertFile, tlsKeyFile string) error {
	l, err := listenOn(cfg, ln, tlsCertFile, tlsKeyFile)
	if err != nil {
		ln.Close()
		return err
	}
	return l.Serve(ctx)
}

// listenOn checks cfg and the TLS files for an API served on ln.
func listenOn(cfg Config, ln net.Listener, tlsCertFile, tlsKeyFile string) (*Listener, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	var tlsConfig *tls.Config
	switch {
	case (tlsCertFile == "") != (tlsKeyFile == ""):
		return nil, errors.New("admin: TLS needs both a certificate file and a key file; give both or neither")
	case tlsCertFile != "":
		pair, err := tls.LoadX509KeyPair(tlsCertFile, tlsKeyFile)
		if err != nil {
			return nil, fmt.Errorf("admin: loading the TLS certificate and key: %w", err)
		}
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	}
	return &Listener{s: s, ln: ln, tls: tlsConfig}, nil
}

// Serve runs the API until ctx ends, then shuts down gracefully; it
// closes the listener.
func (l *Listener) Serve(ctx context.Context) error {
	s, ln, tlsConfig := l.s, l.ln, l.tls
	defer ln.Close()
	addr := ln.Addr().String()
	if tlsConfig == nil && !isLoopback(addr) {
		s.log.Warn("admin: THE ADMIN API IS LISTENING ON A NON-LOOPBACK ADDRESS WITHOUT TLS: bearer tokens and subjects cross the network in clear text; configure a TLS certificate and key, or listen on 127.0.0.1", "addr", addr)
	}
	srv := &http.Server{
		Handler:           s.router(),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		// net/http's own messages (TLS handshake failures) carry no
		// bodies; send them to the structured log.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-served: // Serve failed on its own
			return
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			s.log.Warn("admin: requests still running at shutdown were cut", "err", err)
		}
	}()
	s.log.Info("admin: listening", "addr", addr, "tls", tlsConfig != nil)
	var err error
	if tlsConfig != nil {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	close(served)
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("admin: serving on %s: %w", addr, err)
}

// isLoopback reports whether addr (host:port) is reachable only from this
// machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyTimeout bounds a readiness check, so that a hung dependency makes
// the probe fail rather than hang.
const readyTimeout = 5 * time.Second

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
