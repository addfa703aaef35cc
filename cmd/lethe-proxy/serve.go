package main

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/lethe-privacy/lethe/config"
)

const serveUsage = `Usage:
  lethe-proxy serve --config FILE   run the proxy (start from config.example.yaml)
`

func serve(args []string, stderr io.Writer) int {
	fs := newFlagSet("serve", "", stderr)
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
	p, err := startProxy(ctx, cfg, *path, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	code := p.serve(ctx, stop, cfg.ShutdownTimeout.D(), log)
	p.close()
	if code == 0 {
		log.Info("stopped")
	}
	return code
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
