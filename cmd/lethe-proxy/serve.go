package main

import (
	"io"

	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/config/proxyopen"
)

// coreOptions are the capture core's: the zero value, except in this
// package's test binary run as bench/small.sh's nosync proxy
// (nosync_bench_test.go).
var coreOptions coreopen.Options

// tool names this program in what it signs.
func tool() string { return "lethe-proxy " + version }

// proxyOptions name this program to the proxy it starts.
func proxyOptions() proxyopen.Options {
	return proxyopen.Options{Version: version, Tool: tool(), Core: coreOptions}
}

// serveCmd runs the proxy until a signal or a failed listener.
func serveCmd(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlagSet("serve", "", stderr)
	path := fs.String("config", "", "configuration file (see config.example.yaml)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig("serve", *path, usageOf("serve"), false, stderr)
	if !ok {
		return exitConfig
	}
	log := cfg.Log.NewLogger(stderr)
	// Signals are caught before anything listens: a SIGTERM that arrives
	// once a client can connect stops the proxy gracefully.
	ctx, stop := signalContext()
	defer stop()
	p, err := proxyopen.Start(ctx, cfg, *path, log, proxyOptions())
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	failed := p.Serve(ctx, stop, cfg.ShutdownTimeout.D(), log)
	p.Close()
	if failed != nil {
		return 1
	}
	log.Info("stopped")
	return 0
}
