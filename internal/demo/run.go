package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
	// DatabaseURL, when set, names a PostgreSQL server with pgvector: the
	// demo also runs the PostgreSQL relay in front of it, on a table of its
	// own (Table).
	DatabaseURL string
	Stdout      io.Writer
	Stderr      io.Writer
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
	if err := st.forgetEmulatorMarks(ctx); err != nil {
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
	var pg *pgTarget
	if opts.DatabaseURL != "" {
		target, err := st.preparePostgres(ctx, opts.DatabaseURL)
		if err != nil {
			return fail(err)
		}
		pg = &target
		if at.Postgres, err = freeAddr(); err != nil {
			return fail(err)
		}
		if !pg.WAL {
			fmt.Fprintf(opts.Stdout, "The WAL follower is off (capture.wal: off): %s. Writes through the proxy are still captured.\n", pg.WALOff)
		}
		// The proxy's own connections (capture.store) read it from there.
		if pg.Password != "" {
			if err := os.Setenv("PGPASSWORD", pg.Password); err != nil {
				return fail(err)
			}
		}
	}
	if err := st.writeConfig(at, pg); err != nil {
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
		write := func() error {
			if err := writeMemories(ctx, at.Pinecone, person); err != nil {
				return err
			}
			if pg == nil {
				return nil
			}
			return writeRows(ctx, *pg, at.Postgres, person)
		}
		if err := writeSamples(ctx, client, person, write, opts.Stderr); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(opts.Stdout, "Wrote sample memories for %s and %s through the proxy (Pinecone index %q, namespace %q).\n",
		People[0], People[1], IndexName, Namespace)
	if pg != nil {
		fmt.Fprintf(opts.Stdout, "Wrote sample rows for %s and %s through the proxy (PostgreSQL table %s).\n", People[0], People[1], Table)
	}
	printWhere(opts, adminURL, at, pg)
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
func writeSamples(ctx context.Context, client *adminclient.Client, person string, write func() error, stderr io.Writer) error {
	err := write()
	var forgotten errForgotten
	if !errors.As(err, &forgotten) {
		return err
	}
	fmt.Fprintf(stderr, "The proxy refused %s's sample memories: %s was forgotten in an earlier run of the demo. Lifting that, to write them again.\n", person, person)
	if _, err := client.Lift(ctx, person); err != nil {
		return fmt.Errorf("lifting %s, forgotten in an earlier run: %w; or start afresh with demo --clean", person, err)
	}
	return write()
}

// printWhere prints where the admin API, the console and the browser
// verifier are, and the CLI line that forgets alice.
func printWhere(opts Options, adminURL string, at addresses, pg *pgTarget) {
	st := opts.State
	fmt.Fprintf(opts.Stdout, `
Proxy:             Pinecone data plane at http://%s (index host for go-pinecone or the Node SDK)
Index host behind: %s (the Pinecone emulator, in memory)
Admin API:         %s (operator token in %s)
Console:           %s/console (log in with the operator token in %s)
Browser verifier:  %s/verify (trusted keys: %s)
State directory:   %s

Forget alice in the console (New forget), or from another shell:
  printf 'alice\n' | %s forget run --admin %s --token-file %s --keys %s

`, at.Pinecone, at.Emulator, adminURL, st.Path(fileToken), adminURL, st.Path(fileToken), adminURL, st.Path(fileTrustedKeys), st.Dir,
		opts.Command, adminURL, st.Path(fileToken), st.Path(fileTrustedKeys))
	if pg != nil {
		host, port, _ := strings.Cut(at.Postgres, ":")
		fmt.Fprintf(opts.Stdout, `PostgreSQL:        the proxy at %s in front of %s (table %s)
Look at the table through the proxy:
  psql "host=%s port=%s user=%s dbname=%s sslmode=disable" -c 'SELECT id, user_id, content FROM %s ORDER BY id'

`, at.Postgres, pg.Upstream, Table, host, port, pg.User, pg.Database, Table)
	}
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
