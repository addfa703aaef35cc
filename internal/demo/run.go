package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// Proxy is a started proxy: Stop shuts it down and returns its exit
// status; Failed is closed or sent on when it stops serving by itself.
type Proxy interface {
	Stop() int
	Failed() <-chan int
}

// Start starts the proxy of the configuration file at configPath the way
// serve does and returns once every listener is open.
type Start func(ctx context.Context, configPath string) (Proxy, error)

// Options are a demo run's.
type Options struct {
	State State
	// Run forgets alice, prints the certificate's verdict and returns;
	// without it the demo serves until ctx ends.
	Run bool
	// Command is how the printed CLI lines call lethe-proxy.
	Command string
	Stdout  io.Writer
	Stderr  io.Writer
}

// Run prepares the state directory, starts the emulator and the proxy,
// writes the sample memories and then forgets alice (Options.Run) or
// serves until ctx ends. It returns the exit status: with Run, 0 only
// when alice's certificate is valid.
func Run(ctx context.Context, opts Options, start Start) int {
	fail := func(err error) int {
		fmt.Fprintf(opts.Stderr, "lethe-proxy demo: %v\n", err)
		return 1
	}
	st := opts.State
	if err := st.Prepare(); err != nil {
		return fail(err)
	}
	token, err := st.Token()
	if err != nil {
		return fail(err)
	}
	em := emulator.New(emulator.Config{IndexName: IndexName, APIKey: demoAPIKey})
	emURL, err := em.Start("127.0.0.1:0", nil)
	if err != nil {
		return fail(fmt.Errorf("starting the Pinecone emulator: %w", err))
	}
	defer em.Close()
	at := addresses{Emulator: emURL}
	if at.Pinecone, err = freeAddr(); err != nil {
		return fail(err)
	}
	if at.Admin, err = freeAddr(); err != nil {
		return fail(err)
	}
	if err := st.writeConfig(at); err != nil {
		return fail(err)
	}
	// The proxy reads both from the environment, as under serve.
	if err := os.Setenv(ledgeropen.EnvSaltFile, st.Path(fileSalt)); err != nil {
		return fail(err)
	}
	if err := os.Setenv(apiKeyEnv, demoAPIKey); err != nil {
		return fail(err)
	}
	proxy, err := start(ctx, st.Path(fileConfig))
	if err != nil {
		return fail(fmt.Errorf("starting the proxy: %w (its configuration: %s)", err, st.Path(fileConfig)))
	}
	stopped := false
	stop := func() int {
		if stopped {
			return 0
		}
		stopped = true
		return proxy.Stop()
	}
	defer stop()
	adminURL := "http://" + at.Admin
	client, err := adminclient.NewWithToken(adminURL, token)
	if err != nil {
		return fail(err)
	}
	for _, person := range People {
		if err := writeSamples(ctx, client, at.Pinecone, person, opts.Stderr); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(opts.Stdout, "Wrote sample memories for %s and %s through the proxy (Pinecone index %q, namespace %q).\n",
		People[0], People[1], IndexName, Namespace)
	printWhere(opts, adminURL, at)
	if opts.Run {
		return forgetAlice(ctx, client, opts, stop)
	}
	fmt.Fprintf(opts.Stdout, "Serving until Ctrl-C. Stop: Ctrl-C. Clean up: %s demo --clean --dir %s\n", opts.Command, st.Dir)
	select {
	case <-ctx.Done():
	case code := <-proxy.Failed():
		stopped = true
		return code
	}
	return stop()
}

// writeSamples writes person's sample memories; a person forgotten in an
// earlier run of the demo is lifted first (the proxy refuses writes about
// a forgotten person), so that the demo can be run again.
func writeSamples(ctx context.Context, client *adminclient.Client, proxyAddr, person string, stderr io.Writer) error {
	err := writeMemories(ctx, proxyAddr, person)
	var forgotten errForgotten
	if !errors.As(err, &forgotten) {
		return err
	}
	fmt.Fprintf(stderr, "The proxy refused %s's sample memories: %s was forgotten in an earlier run of the demo. Lifting that, to write them again.\n", person, person)
	if _, err := client.Lift(ctx, person); err != nil {
		return fmt.Errorf("lifting %s, forgotten in an earlier run: %w; or start afresh with demo --clean", person, err)
	}
	return writeMemories(ctx, proxyAddr, person)
}

// printWhere prints where the admin API and the browser verifier are,
// and the CLI line that forgets alice.
func printWhere(opts Options, adminURL string, at addresses) {
	st := opts.State
	fmt.Fprintf(opts.Stdout, `
Proxy:             Pinecone data plane at http://%s (index host for go-pinecone or the Node SDK)
Index host behind: %s (the Pinecone emulator, in memory)
Admin API:         %s (operator token in %s)
Browser verifier:  %s/verify (trusted keys: %s)
State directory:   %s

Forget alice from another shell:
  printf 'alice\n' | %s forget run --admin %s --token-file %s --keys %s

`, at.Pinecone, at.Emulator, adminURL, st.Path(fileToken), adminURL, st.Path(fileTrustedKeys), st.Dir,
		opts.Command, adminURL, st.Path(fileToken), st.Path(fileTrustedKeys))
}

// forgetAlice is forget run --yes for alice: preview, confirm, wait, the
// certificate written to the state directory and verified offline
// against the demo's trusted keys. The proxy is stopped before the
// verdict's exit status is returned.
func forgetAlice(ctx context.Context, client *adminclient.Client, opts Options, stop func() int) int {
	st := opts.State
	run := adminclient.ForgetRun{Subject: People[0], Out: st.Path(fileCertificate), KeysFile: st.Path(fileTrustedKeys)}
	valid, err := client.RunForget(ctx, run, opts.Stdout, opts.Stderr)
	code := stop()
	if err != nil {
		fmt.Fprintf(opts.Stderr, "lethe-proxy demo: the forget of alice did not reach a certificate: %v\n", err)
		return 1
	}
	if !valid {
		fmt.Fprintln(opts.Stderr, "lethe-proxy demo: alice's certificate is NOT valid (see the verdict above)")
		return 1
	}
	fmt.Fprintf(opts.Stdout, "Alice is forgotten; her certificate is valid. Verify it again: %s verify --keys %s %s\n",
		opts.Command, st.Path(fileTrustedKeys), st.Path(fileCertificate))
	if code != 0 {
		return code
	}
	return 0
}
