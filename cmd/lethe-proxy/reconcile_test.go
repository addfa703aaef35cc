package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// reconcile refuses to run, with exit 2 and a message naming what to fix,
// when it is asked something it cannot do; none of these reach a store.
func TestReconcileCmd_ExitTwoWithWhatToFix(t *testing.T) {
	dir := t.TempDir()
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tables := write("tables.yaml", `postgres: {upstream: 127.0.0.1:5432}
capture:
  store: "host=127.0.0.1 port=1 dbname=x"
  tables:
    - {table: public.docs, id: id, subjects: [user_id]}
`)
	bare := write("bare.yaml", "postgres: {upstream: 127.0.0.1:5432}\n")
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("ab", 32))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no config", nil, "--config FILE is required"},
		{"unknown format", []string{"--config", tables, "--format", "yaml"}, `--format "yaml": give text or json`},
		{"report without adopt", []string{"--config", tables, "--report", "r.json"}, "add --adopt"},
		{"adopt without forget", []string{"--config", tables, "--adopt"}, "forget.signing_key"},
		{"nothing configured", []string{"--config", bare}, "nothing to reconcile"},
		{"a stray argument", []string{"--config", tables, "public.docs"}, `unexpected argument "public.docs"`},
		{"missing config file", []string{"--config", filepath.Join(dir, "none.yaml")}, "none.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"reconcile"}, tc.args...), nil, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Fatalf("printed counts: %s", stdout.String())
			}
		})
	}
}

// reconcile logs as the proxy does, by the config's log.level and
// log.format: here a warning (an http:// index host without an API key)
// comes out as JSON, and not at all under log.level: error.
func TestReconcileCmd_LogsByTheConfigsLogSettings(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	dir := t.TempDir()
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("ab", 32))
	t.Setenv("RECONCILE_LOG_TEST_KEY", "")
	for _, tc := range []struct {
		level, format string
		wantJSONWarn  bool
	}{
		{"info", "json", true},
		{"error", "text", false},
	} {
		t.Run(tc.level+"/"+tc.format, func(t *testing.T) {
			path := filepath.Join(dir, tc.level+".yaml")
			yaml := "log: {level: " + tc.level + ", format: " + tc.format + "}\n" +
				"capture: {ledger: {sqlite: " + filepath.Join(dir, tc.level+".db") + "}}\n" +
				"pinecone:\n  indexes:\n    - {name: docs, host: \"" + url + "\", api_key_env: RECONCILE_LOG_TEST_KEY, namespaces: [{namespace: \"*\", subjects: [user_id]}]}\n"
			if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{"reconcile", "--config", path}, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d; stderr: %s", code, stderr.String())
			}
			warned := strings.Contains(stderr.String(), "no Pinecone API key")
			isJSON := strings.HasPrefix(stderr.String(), `{"time":`)
			switch {
			case tc.wantJSONWarn && !(warned && isJSON):
				t.Fatalf("want the warning as a JSON line; stderr: %s", stderr.String())
			case !tc.wantJSONWarn && warned:
				t.Fatalf("log.level error, yet a warning was logged: %s", stderr.String())
			}
		})
	}
}
