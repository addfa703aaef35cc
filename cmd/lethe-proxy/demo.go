package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/internal/demo"
)

// demoCmd is lethe-proxy demo: flags, then internal/demo with serve's start.
func demoCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoUsage, stderr)
	dir := fs.String("dir", demo.DefaultDir(), "the demo's state directory, reused across runs")
	runForget := fs.Bool("run", false, "forget alice, print the verdict, exit 0 only when the certificate is valid")
	clean := fs.Bool("clean", false, "remove the files the demo made in --dir")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*clean && *runForget) {
		fmt.Fprint(stderr, "lethe-proxy demo: takes --dir, and --run or --clean\n\n"+demoUsage)
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy demo: --dir: %v\n", err)
		return 2
	}
	state := demo.State{Dir: abs}
	if *clean {
		dropped, err := state.CleanPostgres(context.Background(), os.Getenv(demo.DatabaseURLEnv))
		if err != nil {
			fmt.Fprintf(stderr, "lethe-proxy demo --clean: %v\n", err)
			return 1
		}
		if len(dropped) > 0 {
			fmt.Fprintf(stdout, "Dropped on the PostgreSQL server: %s\n", strings.Join(dropped, "; "))
		}
		left, err := state.Clean()
		if err != nil {
			fmt.Fprintf(stderr, "lethe-proxy demo --clean: %v\n", err)
			return 1
		}
		if len(left) > 0 {
			fmt.Fprintf(stdout, "Removed the demo's files; %s also holds files the demo did not make, left alone: %s\n", abs, strings.Join(left, ", "))
			return 0
		}
		fmt.Fprintf(stdout, "Removed %s\n", abs)
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts := demo.Options{State: state, Run: *runForget, Command: "lethe-proxy", DatabaseURL: os.Getenv(demo.DatabaseURLEnv), Stdout: stdout, Stderr: stderr}
	return demo.Run(ctx, opts, func(ctx context.Context, configPath string) (demo.Proxy, error) {
		return startDemoProxy(ctx, configPath, stop, stderr)
	})
}

// demoProxy is a proxy serve's way started, serving in the background.
type demoProxy struct {
	stopping atomic.Bool // Stop was called: the end of serving is no failure
	cancel   context.CancelFunc
	done     chan int
	failed   chan int
}

// startDemoProxy loads the configuration and starts and serves it as
// serve does.
func startDemoProxy(ctx context.Context, configPath string, stopSignals func(), stderr io.Writer) (demo.Proxy, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	log := cfg.Log.NewLogger(stderr)
	p, err := startProxy(ctx, cfg, configPath, log)
	if err != nil {
		return nil, err
	}
	serveCtx, cancel := context.WithCancel(ctx)
	dp := &demoProxy{cancel: cancel, done: make(chan int, 1), failed: make(chan int, 1)}
	go func() {
		code := p.serve(serveCtx, stopSignals, cfg.ShutdownTimeout.D(), log)
		p.close()
		if !dp.stopping.Load() && code != 0 { // stopped by itself: a listener failed
			dp.failed <- code
		}
		dp.done <- code
	}()
	return dp, nil
}

func (d *demoProxy) Stop() int {
	d.stopping.Store(true)
	d.cancel()
	return <-d.done
}

func (d *demoProxy) Failed() <-chan int { return d.failed }
