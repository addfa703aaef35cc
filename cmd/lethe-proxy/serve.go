package main

import (
	"context"
	"io"
	"os/signal"
	"syscall"
)

// serveCmd runs the proxy until a signal or a failed listener.
func serveCmd(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlagSet("serve", "", stderr)
	path := fs.String("config", "", "configuration file (see config.example.yaml)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig("serve", *path, serveUsage, false, stderr)
	if !ok {
		return exitConfig
	}
	log := cfg.Log.NewLogger(stderr)
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
