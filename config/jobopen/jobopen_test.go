package jobopen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
)

// A run the configuration cannot carry stops before it opens anything,
// with an error CouldNotRun reports (the command exits 2) that names what
// to set, and writes nothing to stdout.
func TestRuns_AConfigurationTheyCannotCarryIsCouldNotRun(t *testing.T) {
	dir := t.TempDir()
	load := func(name, yaml string) (*config.Config, string) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg, path
	}
	tables, tablesPath := load("tables.yaml", "postgres: {upstream: 127.0.0.1:5432}\ncapture:\n  store: \"host=127.0.0.1 port=1 dbname=x\"\n  tables:\n    - {table: public.docs, id: id, subjects: [user_id]}\n")
	bare, barePath := load("bare.yaml", "postgres: {upstream: 127.0.0.1:5432}\n")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(stdout, stderr *bytes.Buffer) (bool, error)
		want string
	}{
		{"reconcile --adopt without forget", func(o, e *bytes.Buffer) (bool, error) {
			return Reconcile(ctx, tables, tablesPath, ReconcileRun{Adopt: true}, o, e)
		}, "needs forget configured: set forget.signing_key"},
		{"reconcile without rules", func(o, e *bytes.Buffer) (bool, error) {
			return Reconcile(ctx, bare, barePath, ReconcileRun{}, o, e)
		}, "nothing to reconcile"},
		{"replay without forget", func(o, e *bytes.Buffer) (bool, error) {
			return Replay(ctx, tables, tablesPath, ReplayRun{}, o, e)
		}, "or pass --dry-run to count only"},
		{"replay without rules", func(o, e *bytes.Buffer) (bool, error) {
			return Replay(ctx, bare, barePath, ReplayRun{DryRun: true}, o, e)
		}, "nothing to replay into"},
		{"sweep without forget", func(o, e *bytes.Buffer) (bool, error) {
			return Sweep(ctx, tables, tablesPath, SweepRun{Batch: 1}, o, e)
		}, tablesPath + " sets no forget.signing_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			clean, err := tc.run(&stdout, &stderr)
			if clean || !CouldNotRun(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("clean %t, error %v (CouldNotRun %t); want a CouldNotRun error naming %q", clean, err, CouldNotRun(err), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("wrote to stdout: %s", stdout.String())
			}
		})
	}
}

func TestCouldNotRun_SeesThroughWrapping(t *testing.T) {
	refused := couldNotRun{errors.New("no key")}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{refused, true},
		{fmt.Errorf("opening: %w", refused), true},
		{errors.New("expired records are left"), false},
		{nil, false},
	} {
		if got := CouldNotRun(tc.err); got != tc.want {
			t.Errorf("CouldNotRun(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
	if refused.Error() != "no key" {
		t.Errorf("text %q, want the wrapped error's", refused.Error())
	}
}
