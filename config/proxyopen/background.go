package proxyopen

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/lethe-privacy/lethe/config"
)

// Background is a proxy started as serve starts it and serving in a
// goroutine (lethe-proxy demo's): Stop ends it, Failed tells when it
// ended by itself. Exit statuses are serve's: 0, or 1 for a failed
// listener.
type Background struct {
	stopping atomic.Bool // Stop was called: the end of serving is no failure
	cancel   context.CancelFunc
	done     chan int
	failed   chan int
}

// StartBackground loads the configuration at configPath, logs to stderr
// as its log section says, starts the proxy as Start does and serves it
// until Stop or ctx ends. It returns once every listener is open.
func StartBackground(ctx context.Context, configPath string, stopSignals func(), stderr io.Writer, opts Options) (*Background, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	log := cfg.Log.NewLogger(stderr)
	p, err := Start(ctx, cfg, configPath, log, opts)
	if err != nil {
		return nil, err
	}
	serveCtx, cancel := context.WithCancel(ctx)
	bg := &Background{cancel: cancel, done: make(chan int, 1), failed: make(chan int, 1)}
	go func() {
		code := 0
		if p.Serve(serveCtx, stopSignals, cfg.ShutdownTimeout.D(), log) != nil {
			code = 1
		}
		p.Close()
		if !bg.stopping.Load() && code != 0 { // stopped by itself: a listener failed
			bg.failed <- code
		}
		bg.done <- code
	}()
	return bg, nil
}

// Stop shuts the proxy down and returns its exit status.
func (b *Background) Stop() int {
	b.stopping.Store(true)
	b.cancel()
	return <-b.done
}

// Failed receives the exit status when the proxy stops serving by itself.
func (b *Background) Failed() <-chan int { return b.failed }
