package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config/ledgeropen"
)

// Every command that works through capture.store says the same when it
// cannot connect, and when it is not set: which key, and what to do.
func TestStoreCommands_SameWordsForAStoreNotSetOrUnreachable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("ab", 32))
	config := func(name, store string) string {
		p := filepath.Join(dir, name)
		yaml := "postgres: {upstream: 127.0.0.1:5432}\n" +
			"capture:\n  wal: off\n  database: x\n  ledger: {sqlite: " + filepath.Join(dir, name+".db") + "}\n" +
			"  tables:\n    - {table: public.docs, id: id, subjects: [user_id], retain: 7d, retain_by: created_at}\n"
		if store != "" {
			yaml = strings.Replace(yaml, "  wal: off\n", "  wal: off\n  store: \""+store+"\"\n", 1)
		}
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Port 1 refuses at once: nothing listens there.
	unreachable := config("unreachable.yaml", "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=5")
	unset := config("unset.yaml", "")
	commands := [][]string{{"check"}, {"reconcile"}, {"sweep", "--dry-run"}, {"wal", "status"}}
	for _, tc := range []struct {
		config, want string
	}{
		{unreachable, "connecting with capture.store:"},
		{unset, "capture.store is not set:"},
	} {
		for _, cmd := range commands {
			t.Run(filepath.Base(tc.config)+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(append(cmd, "--config", tc.config), nil, &stdout, &stderr)
				if code == 0 {
					t.Fatalf("exit 0; stdout: %s", stdout.String())
				}
				if !strings.Contains(stderr.String(), tc.want) {
					t.Fatalf("stderr %q does not say %q", stderr.String(), tc.want)
				}
			})
		}
	}
}
