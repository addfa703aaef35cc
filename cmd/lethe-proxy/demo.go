package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lethe-privacy/lethe/config/proxyopen"
	"github.com/lethe-privacy/lethe/internal/demo"
)

// demoCmd is lethe-proxy demo: flags, then internal/demo with serve's start.
func demoCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", usageOf("demo"), stderr)
	dir := fs.String("dir", demo.DefaultDir(), "the demo's state directory, reused across runs")
	runForget := fs.Bool("run", false, "forget alice, print the verdict, exit 0 only when the certificate is valid")
	clean := fs.Bool("clean", false, "remove the files the demo made in --dir")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*clean && *runForget) {
		fmt.Fprint(stderr, "lethe-proxy demo: takes --dir, and --run or --clean\n\n"+usageOf("demo"))
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy demo: --dir: %v\n", err)
		return 2
	}
	state := demo.State{Dir: abs}
	if *clean {
		if err := state.CleanAll(context.Background(), os.Getenv(demo.DatabaseURLEnv), stdout); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy demo --clean: %v\n", err)
			return 1
		}
		return 0
	}
	ctx, stop := signalContext()
	defer stop()
	opts := demo.Options{State: state, Run: *runForget, Command: "lethe-proxy", DatabaseURL: os.Getenv(demo.DatabaseURLEnv), Stdout: stdout, Stderr: stderr}
	return demo.Run(ctx, opts, func(ctx context.Context, configPath string) (demo.Proxy, error) {
		bg, err := proxyopen.StartBackground(ctx, configPath, stop, stderr, proxyOptions())
		if err != nil {
			return nil, err // not a nil *Background in a non-nil demo.Proxy
		}
		return bg, nil
	})
}
