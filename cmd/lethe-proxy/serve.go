package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

const serveUsage = `Usage:
  lethe-proxy serve --config FILE   run the proxy (start from config.example.yaml)
`

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "configuration file (see config.example.yaml)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig("serve", *path, serveUsage, false, stderr)
	if !ok {
		return exitConfig
	}
	log := newLogger(cfg.Log, stderr)
	// Signals are caught before anything listens: a SIGTERM that arrives
	// once a client can connect stops the proxy gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, err := newPostgresServer(cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	capt, err := newCapture(cfg, *path, log)
	if err != nil {
		log.Error("cannot start capture", "err", err)
		return 1
	}
	if cfg.Coverage.Mode == config.CoverageEnforce && cfg.Postgres.Upstream != "" && (capt == nil || capt.coverage == nil) {
		log.Warn("coverage.mode is enforce but the proxy cannot check coverage: it needs capture.tables and capture.store (lethe-proxy check works without capture.tables)")
	}
	var pcHook *pcapture.Hook
	if capt != nil {
		if capt.observer != nil {
			srv.Observer = capt.observer
		}
		pcHook = capt.pinecone
		defer capt.ledger.Close()
		defer capt.capture.Close() // runs first: queued confirmations reach the ledger (a no-op after the Shutdown below)
	}
	fg, err := newForget(cfg, capt, log)
	if err != nil {
		log.Error("cannot start forget", "err", err)
		return 1
	}
	if fg != nil {
		defer fg.Close() // before the ledger closes
	}
	pcSrv, pcRelay, err := newPineconeServer(cfg, pcHook, log)
	if err != nil {
		log.Error("cannot start the Pinecone relay", "err", err)
		return 1
	}
	if pcSrv != nil {
		defer pcRelay.Close()
	}
	// Every listener is bound, and every file read, before the slot is
	// made: a start that fails leaves no slot keeping the server's WAL.
	ls, err := listen(cfg, pcSrv != nil, fg, capt, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	if capt != nil && capt.wal != nil {
		if err := capt.wal.prepare(ctx); err != nil {
			ls.close()
			log.Error("cannot start capture", "err", err)
			return 1
		}
		capt.wal.start(cfg.Capture.WALSlot)
		defer capt.stopFollowing() // first: its backstop uses fg's engine
	}
	ln, pcLn := ls.postgres, ls.pinecone
	served := make(chan error, 1)
	if ln != nil {
		log.Info("lethe-proxy started", "version", version, "listen", ln.Addr().String(),
			"upstream", cfg.Postgres.Upstream, "upstream_tls", cfg.Postgres.UpstreamTLS)
		go func() { served <- srv.Serve(ln) }()
	} else {
		log.Info("lethe-proxy started without the PostgreSQL relay (postgres.upstream is not set)", "version", version)
	}
	pcDone := make(chan error, 1)
	if pcSrv != nil {
		log.Info("pinecone relay started", "listen", pcLn.Addr().String(), "indexes", len(cfg.Pinecone.Indexes), "tls", pcSrv.TLSConfig != nil)
		go func() { pcDone <- pinecone.Serve(pcSrv, pcLn) }()
	}
	adminDone := make(chan error, 1)
	if ls.admin != nil {
		go func() { adminDone <- ls.admin.Serve(ctx) }()
	}
	select {
	case err := <-served:
		log.Error("listener failed", "err", err)
		return 1
	case err := <-adminDone:
		log.Error("admin API failed", "err", err)
		return 1
	case err := <-pcDone:
		log.Error("pinecone listener failed", "err", err)
		return 1
	case <-ctx.Done():
	}
	stop() // a second signal kills the process the default way
	log.Info("shutting down: draining sessions", "timeout", cfg.ShutdownTimeout.D())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.D())
	defer cancel()
	pcStopped := make(chan struct{})
	go func() {
		defer close(pcStopped)
		if pcSrv == nil {
			return
		}
		// Within the same shutdown_timeout: idle connections close at
		// once, requests in flight are answered, then the rest are cut.
		if err := pcSrv.Shutdown(sctx); err != nil {
			log.Warn("shutdown timeout reached; busy Pinecone connections were closed", "err", err)
			pcSrv.Close()
		}
		if err := <-pcDone; err != nil {
			log.Error("pinecone listener failed", "err", err)
		}
	}()
	if ln != nil {
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("shutdown timeout reached; busy sessions were closed", "err", err)
		}
	}
	<-pcStopped
	if ln != nil {
		if err := <-served; !errors.Is(err, pgwire.ErrServerClosed) {
			log.Error("listener failed", "err", err)
		}
	}
	if capt != nil {
		// Within what is left of shutdown_timeout: confirmations still
		// queued after it stay pending for recovery.
		capt.capture.Shutdown(sctx)
	}
	log.Info("stopped")
	return 0
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	level.UnmarshalText([]byte(c.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func newPostgresServer(cfg *config.Config, log *slog.Logger) (*pgwire.Server, error) {
	p := cfg.Postgres
	up := &pgwire.Upstream{
		Addr:        p.Upstream,
		TLSMode:     pgwire.TLSMode(p.UpstreamTLS),
		DialTimeout: p.ConnectTimeout.D(),
		TLS:         &tls.Config{ServerName: p.UpstreamServerName, MinVersion: tls.VersionTLS12},
	}
	if p.UpstreamCAFile != "" {
		pem, err := os.ReadFile(p.UpstreamCAFile)
		if err != nil {
			return nil, fmt.Errorf("postgres.upstream_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("postgres.upstream_ca_file: no PEM certificate in %s", p.UpstreamCAFile)
		}
		up.TLS.RootCAs = pool
	}
	srv := &pgwire.Server{
		Upstream:       up,
		RequireTLS:     p.TLS.Required,
		MaxMessageSize: int(p.MaxMessageSize),
		Logger:         log,
	}
	if p.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(p.TLS.CertFile, p.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("postgres.tls: loading %s / %s: %w", p.TLS.CertFile, p.TLS.KeyFile, err)
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return srv, nil
}
