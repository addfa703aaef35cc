package proxyopen

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/config/forgetopen"
	"github.com/lethe-privacy/lethe/connector"
)

// Options name the program that runs the proxy and adjust its core.
type Options struct {
	// Version is the program's version, logged when the proxy starts.
	Version string
	// Tool names the program in what forget signs ("lethe-proxy VERSION").
	Tool string
	// Core is the capture core's: the zero value, except in a test binary
	// (coreopen.Options).
	Core coreopen.Options
}

// Proxy is a serving proxy: the capture core and its ledger, the wings,
// forget's engine and the admin API. Each is nil when the config does
// not ask for it.
type Proxy struct {
	core    *coreopen.Core
	wings   connector.Wings
	forget  *forgetopen.Forget
	admin   *admin.Listener
	version string
}

// Start builds and starts everything serve runs, in this order: the
// core and the ledger, the wings, forget, then every wing's listener and
// the admin API's (a port taken or a file that does not load stops the
// start here, before anything is made that would have to be undone), and
// last each wing's Prepare (the WAL follower's slot). On an error what
// was started is stopped again.
func Start(ctx context.Context, cfg *config.Config, configPath string, log *slog.Logger, opts Options) (_ *Proxy, err error) {
	p := &Proxy{version: opts.Version}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.core, err = coreopen.Open(cfg, configPath, log, opts.Core); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if p.wings, err = Wings(cfg, p.core, log); err != nil {
		return nil, err
	}
	if p.forget, err = forgetopen.Open(cfg, p.core, p.wings, opts.Tool, log); err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	if err := p.wings.Listen(); err != nil {
		return nil, err
	}
	if p.forget != nil {
		if p.admin, err = p.forget.ListenAdmin(cfg, p.core, p.wings, log); err != nil {
			return nil, err
		}
	}
	if err := p.wings.Prepare(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Serve runs every wing and the admin API until ctx ends (a signal) or
// one of them fails, then shuts them down within shutdownTimeout. It
// returns the failure that ended it, already logged, or nil when ctx
// ended it.
func (p *Proxy) Serve(ctx context.Context, stopSignals func(), shutdownTimeout time.Duration, log *slog.Logger) error {
	serving := p.wings.Serve()
	adminFailed := make(chan error, 1)
	adminCtx, stopAdmin := context.WithCancel(ctx)
	defer stopAdmin()
	if p.admin != nil {
		go func() {
			if err := p.admin.Serve(adminCtx); err != nil {
				adminFailed <- fmt.Errorf("admin API: %w", err)
			}
		}()
	}
	log.Info("lethe-proxy started", "version", p.version, "wings", p.wings.Names())
	var failed error
	select {
	case failed = <-serving.Failed():
		log.Error("listener failed", "err", failed)
	case failed = <-adminFailed:
		log.Error("listener failed", "err", failed)
	case <-ctx.Done():
	}
	stopSignals() // a second signal kills the process the default way
	stopAdmin()
	log.Info("shutting down: draining sessions", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for i, err := range serving.Shutdown(sctx) { // every wing within the same shutdown_timeout
		if err != nil && failed == nil {
			log.Error("listener failed", "wing", p.wings[i].Name(), "err", err)
		}
	}
	if p.core != nil {
		// Within what is left of shutdown_timeout: confirmations still
		// queued after it stay pending for recovery.
		p.core.Capture.Shutdown(sctx)
	}
	return failed
}

// Close stops what Start started, in reverse: forget's engine, the wings
// (their background work, for a start that did not serve), the core and
// the ledger.
func (p *Proxy) Close() {
	if p.admin != nil {
		p.admin.Close() // a listener never served is still open
	}
	p.forget.Close()
	p.wings.Close()
	p.core.Close()
}
