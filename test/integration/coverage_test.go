//go:build integration

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// coverageEnv is a database of its own (the shared test database holds
// other tests' tables, which check would report) and a lethe-proxy binary.
type coverageEnv struct {
	db  testDB // with DB the coverage test's own database
	bin string
	dir string
}

func newCoverageEnv(t *testing.T) *coverageEnv {
	t.Helper()
	db := otherDatabase(t, loadTestDB(t))
	extExec(t, db, "CREATE EXTENSION IF NOT EXISTS vector")
	return &coverageEnv{db: db, bin: buildProxy(t), dir: t.TempDir()}
}

// config writes lethe.yaml: the proxy on addr (when not empty) in front of
// the test cluster, capture.store as user, the given YAML under capture
// (tables: …, wal: …) and the rest of the file (coverage: …).
func (e *coverageEnv) config(t *testing.T, addr, user, captureYAML, rest string) string {
	t.Helper()
	cfg := filepath.Join(e.dir, "lethe.yaml")
	listen := ""
	if addr != "" {
		listen = "  listen: " + addr + "\n"
	}
	store := fmt.Sprintf("host=%s port=%s user=%s dbname=%s", e.db.Host, e.db.Port, user, e.db.DB)
	if user == e.db.User {
		store += " password=" + e.db.Password
	}
	yaml := fmt.Sprintf("postgres:\n%s  upstream: %s\ncapture:\n  database: %s\n  store: %q\n  ledger: {sqlite: ledger.db}\n%s%s",
		listen, e.db.Addr(), e.db.DB, store, captureYAML, rest)
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	return cfg
}

// check runs lethe-proxy check and returns its stdout, stderr and exit status.
func (e *coverageEnv) check(t *testing.T, cfg string, args ...string) (string, string, int) {
	t.Helper()
	r := runCommand(t, exec.Command(e.bin, append([]string{"check", "--config", cfg}, args...)...))
	return r.stdout, r.stderr, r.code
}

type checkJSON struct {
	Version  int `json:"version"`
	Findings []struct {
		Severity, Code, Store, Table, Column, Index, Namespace, Where, Message, Fix string
	} `json:"findings"`
	Summary struct {
		OK                bool `json:"ok"`
		Errors            int  `json:"errors"`
		Warnings          int  `json:"warnings"`
		TablesChecked     int  `json:"tables_checked"`
		NamespacesChecked int  `json:"namespaces_checked"`
	} `json:"summary"`
}

func (c checkJSON) codes() []string {
	var out []string
	for _, f := range c.Findings {
		what := f.Table
		if f.Column != "" {
			what += "." + f.Column
		}
		if f.Index != "" {
			what = f.Index + "/" + f.Namespace
		}
		out = append(out, f.Severity+" "+f.Code+" "+what)
	}
	return out
}

func (e *coverageEnv) checkJSON(t *testing.T, cfg string) (checkJSON, int) {
	t.Helper()
	out, stderr, code := e.check(t, cfg, "--format", "json")
	var got checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), "stdout: %s\nstderr: %s", out, stderr)
	return got, code
}

// TestCheck_TablesWithoutARuleFailTheCheck: vector tables and tables with
// a column named like a subject need a rule or an ignore; a table with
// neither, a view, and the partitions of a partitioned table are not
// reported on their own; a rule whose table is missing is a warning, one
// reading a missing column an error. The three formats say the same.
func TestCheck_TablesWithoutARuleFailTheCheck(t *testing.T) {
	e := newCoverageEnv(t)
	extExec(t, e.db,
		"CREATE TABLE cov_docs (id text PRIMARY KEY, user_id text, embedding vector(3))",
		"CREATE TABLE cov_notes (id text PRIMARY KEY, body text, embedding halfvec(3))",
		"CREATE TABLE cov_orders (id int PRIMARY KEY, customer_id text)",
		"CREATE TABLE cov_settings (key text PRIMARY KEY, value text)",
		"CREATE VIEW cov_notes_v AS SELECT id, embedding FROM cov_notes",
		"CREATE TABLE cov_events (id text, day date, embedding vector(3)) PARTITION BY RANGE (day)",
		"CREATE TABLE cov_events_2026 PARTITION OF cov_events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
		"CREATE SCHEMA app",
		"CREATE TABLE app.memories (id text PRIMARY KEY, payload jsonb, embedding sparsevec(5))",
	)
	rules := "  wal: off\n  tables:\n" +
		"    - {table: public.cov_docs, id: id, subjects: [user_id]}\n" +
		"    - {table: public.cov_later, id: id, subjects: [user_id]}\n"
	cfg := e.config(t, "", e.db.User, rules, "")

	out, stderr, code := e.check(t, cfg)
	require.Equal(t, 1, code, "stdout: %s\nstderr: %s", out, stderr)
	assert.Contains(t, out, "ERROR   database: table public.cov_notes has vector column embedding and no rule\n")
	assert.Contains(t, out, "ERROR   database: table public.cov_orders has column customer_id named like a person's id and no rule\n")
	assert.Contains(t, out, "- {table: public.cov_orders, id: id, subjects: [customer_id]}", "the YAML to add")
	assert.Contains(t, out, "ERROR   database: table public.cov_events has vector column embedding and no rule\n")
	assert.Contains(t, out, "ERROR   database: table app.memories has vector column embedding and no rule\n")
	assert.Contains(t, out, "WARNING "+cfg+":10: capture.tables names public.cov_later, which does not exist (yet)\n")
	assert.NotContains(t, out, "cov_settings")
	assert.NotContains(t, out, "cov_notes_v")
	assert.NotContains(t, out, "cov_events_2026")
	assert.NotContains(t, out, "public.cov_docs")
	assert.Contains(t, out, "coverage FAILED: 4 errors, 1 warning (7 tables, 0 namespaces checked)\n")

	got, code := e.checkJSON(t, cfg)
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, got.Version)
	assert.Equal(t, []string{
		"error uncovered_table app.memories", "error uncovered_table public.cov_events",
		"warning missing_table public.cov_later", "error uncovered_table public.cov_notes",
		"error uncovered_table public.cov_orders",
	}, got.codes())
	assert.False(t, got.Summary.OK)
	assert.Equal(t, 4, got.Summary.Errors)

	out, _, code = e.check(t, cfg, "--format", "github")
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 6, out)
	annotation := regexp.MustCompile(`^::(error|warning) ([a-z]+=[^,:]*)(,[a-z]+=[^,:]*)*::\S.*$`)
	for _, l := range lines[:5] {
		assert.Regexp(t, annotation, l)
	}
	assert.Contains(t, out, "::warning file="+strings.ReplaceAll(cfg, ":", "%3A")+",line=10,title=Lethe coverage%3A public.cov_later::")
	assert.Equal(t, "coverage FAILED: 4 errors, 1 warning (7 tables, 0 namespaces checked)", lines[5])

	// Ignores with reasons cover the rest: warnings alone pass.
	ignores := "coverage:\n  ignore:\n" +
		"    - {table: public.cov_notes, reason: product manuals}\n" +
		"    - {table: public.cov_orders, reason: \"order ids only, the customers are in the CRM\"}\n" +
		"    - {table: public.cov_events, reason: synthetic load}\n" +
		"    - {table: app.memories, reason: test fixtures}\n"
	cfg = e.config(t, "", e.db.User, rules, ignores)
	out, stderr, code = e.check(t, cfg)
	assert.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, stderr)
	assert.Contains(t, out, "coverage ok: 0 errors, 1 warning")

	// A stale rule: the subject column does not exist.
	stale := "  wal: off\n  tables:\n    - {table: public.cov_docs, id: id, subjects: [owner_id]}\n"
	got, code = e.checkJSON(t, e.config(t, "", e.db.User, stale, ignores))
	assert.Equal(t, 1, code)
	assert.Equal(t, []string{"error missing_column public.cov_docs.owner_id"}, got.codes())
	assert.Contains(t, got.Findings[0].Fix, "id, user_id, embedding")

	// The catalog is all check reads: a role that may not read the
	// tables' rows gets the same findings.
	asReader, code := e.checkJSON(t, e.config(t, "", "lethe_trust", rules, ""))
	assert.Equal(t, 1, code)
	assert.Equal(t, []string{
		"error uncovered_table app.memories", "error uncovered_table public.cov_events",
		"warning missing_table public.cov_later", "error uncovered_table public.cov_notes",
		"error uncovered_table public.cov_orders",
	}, asReader.codes())
	_, err := connect(t, e.db.DSN(e.db.Addr(), "user=lethe_trust")).Exec(ctxT(t), "SELECT 1 FROM cov_notes")
	assert.Equal(t, "42501", pgCode(err), "lethe_trust may not read the rows: %v", err)
}

// TestCheck_ExitsTwoWhenItCannotCheck: a config that does not load, an
// unknown format, and a server nobody listens on exit 2, not 1.
func TestCheck_ExitsTwoWhenItCannotCheck(t *testing.T) {
	bin := buildProxy(t)
	dir := t.TempDir()
	run := func(args ...string) (string, int) {
		out, err := exec.Command(bin, append([]string{"check"}, args...)...).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("coverage:\n  mode: sometimes\n"), 0o600))
	out, code := run("--config", bad)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, `coverage.mode: "sometimes" is not one of report, enforce`)

	out, code = run()
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "--config FILE is required")

	// A loopback port with nothing listening.
	down := freePort(t)
	cfg := filepath.Join(dir, "down.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("postgres: {upstream: %q}\ncapture:\n  store: \"host=127.0.0.1 port=%s user=x dbname=x connect_timeout=5\"\n",
		down, strings.Split(down, ":")[1])), 0o600))
	out, code = run("--config", cfg)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "lethe-proxy check: postgres: connecting with capture.store")
	assert.Contains(t, out, "coverage INCOMPLETE: 0 errors, 0 warnings (0 tables, 0 namespaces checked; not checked: postgres)")

	out, code = run("--config", cfg, "--format", "xml")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, `--format "xml": use one of text, github, json`)
}

// TestCheck_PineconeNamespacesNeedARule: every namespace the index reports
// needs a namespace rule, a "*" rule or an ignore.
func TestCheck_PineconeNamespacesNeedARule(t *testing.T) {
	bin := buildProxy(t)
	_, host := startEmulator(t, emulator.Config{APIKey: "cov-key"})
	for _, ns := range []string{"chat", "manuals", ""} {
		body := fmt.Sprintf(`{"namespace": %q, "vectors": [{"id": "v1", "values": [0.1, 0.2], "metadata": {"user_id": "u"}}]}`, ns)
		req, err := http.NewRequest(http.MethodPost, host+"/vectors/upsert", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Api-Key", "cov-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	dir := t.TempDir()
	check := func(namespaces, ignores string) (checkJSON, int) {
		cfg := filepath.Join(dir, "lethe.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("pinecone:\n  indexes:\n    - name: docs\n      host: %q\n      namespaces: [%s]\n%s",
			host, namespaces, ignores)), 0o600))
		cmd := exec.Command(bin, "check", "--config", cfg, "--format", "json")
		cmd.Env = append(os.Environ(), "LETHE_PINECONE_API_KEY=cov-key")
		r := runCommand(t, cmd)
		var got checkJSON
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), "%s", r.stdout)
		return got, r.code
	}

	got, code := check(`{namespace: chat, subjects: [user_id]}`, "")
	assert.Equal(t, 1, code)
	assert.Equal(t, []string{"error uncovered_namespace docs/__default__", "error uncovered_namespace docs/manuals"}, got.codes())
	assert.Equal(t, 3, got.Summary.NamespacesChecked)
	assert.Equal(t, "index docs", got.Findings[0].Where)

	got, code = check(`{namespace: chat, subjects: [user_id]}, {namespace: "*", subjects: [owner]}`, "")
	assert.Equal(t, 0, code)
	assert.Empty(t, got.codes())

	got, code = check(`{namespace: chat, subjects: [user_id]}`,
		"coverage:\n  ignore:\n    - {index: docs, namespace: manuals, reason: shared manuals}\n    - {index: docs, namespace: \"\", reason: smoke tests}\n")
	assert.Equal(t, 0, code)
	assert.Empty(t, got.codes())
}

// proxyLog reads the log file startProxyBinary writes.
func proxyLog(t *testing.T, cfg string) string {
	b, err := os.ReadFile(cfg + ".log")
	require.NoError(t, err)
	return string(b)
}

// TestCoverage_EnforceRefusesWritesToUncoveredTables: with coverage.mode
// enforce, a vector table created through the proxy is uncovered: check
// says so, and writes to it (INSERT, UPDATE, COPY) are refused LT005 while
// the session goes on, reads and deletes pass. With an ignore and a
// restart, writes go through. With the WAL follower on and off.
func TestCoverage_EnforceRefusesWritesToUncoveredTables(t *testing.T) {
	for _, wal := range []string{"off", "on"} {
		t.Run("wal "+wal, func(t *testing.T) {
			e := newCoverageEnv(t)
			extExec(t, e.db, "CREATE TABLE cov_docs (id text PRIMARY KEY, user_id text, embedding vector(3))")
			slot := "lethe_cov_" + wal
			if wal == "on" {
				// Registered before the proxy starts, so it runs after the
				// proxy is stopped and before the database is dropped.
				t.Cleanup(func() {
					out, err := exec.Command(e.bin, "wal", "drop", "--config", filepath.Join(e.dir, "lethe.yaml")).CombinedOutput()
					assert.NoError(t, err, "%s", out)
				})
			}
			addr := freePort(t)
			rules := fmt.Sprintf("  wal: %s\n  wal_slot: %s\n  tables:\n    - {table: public.cov_docs, id: id, subjects: [user_id]}\n", wal, slot)
			cfg := e.config(t, addr, e.db.User, rules, "coverage:\n  mode: enforce\n")
			proc := startProxyBinary(t, e.bin, cfg, addr)

			ctx := ctxT(t)
			app := connect(t, e.db.URL(addr, "sslmode=disable"))
			_, err := app.Exec(ctx, "CREATE TABLE cov_new (id text PRIMARY KEY, body text, embedding vector(3))")
			require.NoError(t, err)
			_, err = app.Exec(ctx, "INSERT INTO cov_new VALUES ($1, $2, '[1,2,3]')", "n1", "hello")
			require.Equal(t, capture.CodeUncovered, pgCode(err), "err: %v", err)
			assert.Contains(t, pgMessage(err), "no rule covers public.cov_new")

			// The session goes on: reads, deletes and covered writes pass.
			var n int
			require.NoError(t, app.QueryRow(ctx, "SELECT count(*) FROM cov_new").Scan(&n))
			assert.Zero(t, n)
			_, err = app.Exec(ctx, "DELETE FROM cov_new")
			require.NoError(t, err)
			_, err = app.Exec(ctx, "INSERT INTO cov_docs (id, user_id, embedding) VALUES ('d1', 'alice', '[1,2,3]')")
			require.NoError(t, err)
			_, err = app.Exec(ctx, "UPDATE cov_new SET body = 'x'", pgx.QueryExecModeSimpleProtocol)
			require.Equal(t, capture.CodeUncovered, pgCode(err), "err: %v", err)
			_, err = app.CopyFrom(ctx, pgx.Identifier{"cov_new"}, []string{"id", "body"}, pgx.CopyFromRows([][]any{{"n2", "x"}}))
			require.Equal(t, capture.CodeUncovered, pgCode(err), "err: %v", err)
			require.NoError(t, app.QueryRow(ctx, "SELECT 1").Scan(&n))

			// A column added later is followed too.
			extExec(t, e.db, "CREATE TABLE cov_plain (id text PRIMARY KEY, body text)")
			_, err = app.Exec(ctx, "INSERT INTO cov_plain VALUES ('p1', 'x')")
			require.NoError(t, err, "a table with neither vectors nor subjects needs no rule")
			_, err = app.Exec(ctx, "ALTER TABLE cov_plain ADD COLUMN embedding vector(3)")
			require.NoError(t, err)
			_, err = app.Exec(ctx, "INSERT INTO cov_plain VALUES ('p2', 'x')")
			require.Equal(t, capture.CodeUncovered, pgCode(err), "err: %v", err)

			out, _, code := e.check(t, cfg)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "table public.cov_new has vector column embedding and no rule")
			logs := proxyLog(t, cfg)
			assert.Contains(t, logs, "table=public.cov_new")
			assert.Contains(t, logs, `coverage="writes refused"`)
			assert.NotContains(t, logs, "hello", "values never reach the logs")

			// Ignored (with a restart), the writes go through.
			require.NoError(t, proc.Process.Kill())
			proc.Wait()
			cfg = e.config(t, addr, e.db.User, rules, "coverage:\n  mode: enforce\n  ignore:\n"+
				"    - {table: public.cov_new, reason: greetings only}\n    - {table: public.cov_plain, reason: fixtures}\n")
			startProxyBinary(t, e.bin, cfg, addr)
			app = connect(t, e.db.URL(addr, "sslmode=disable"))
			_, err = app.Exec(ctx, "INSERT INTO cov_new VALUES ($1, $2, '[1,2,3]')", "n1", "hello")
			require.NoError(t, err)
			_, err = app.Exec(ctx, "INSERT INTO cov_plain VALUES ('p2', 'x')")
			require.NoError(t, err)
			out, _, code = e.check(t, cfg)
			assert.Equal(t, 0, code, out)
		})
	}
}

// TestCoverage_ReportLogsUncoveredTablesOnceAndWritesPass: in report mode
// (the default) a vector table created through the proxy is logged once,
// by name, however many catalog reads follow, and its writes pass.
func TestCoverage_ReportLogsUncoveredTablesOnceAndWritesPass(t *testing.T) {
	e := newCoverageEnv(t)
	extExec(t, e.db, "CREATE TABLE cov_docs (id text PRIMARY KEY, user_id text, embedding vector(3))")
	addr := freePort(t)
	cfg := e.config(t, addr, e.db.User, "  wal: off\n  tables:\n    - {table: public.cov_docs, id: id, subjects: [user_id]}\n", "")
	startProxyBinary(t, e.bin, cfg, addr)

	ctx := ctxT(t)
	app := connect(t, e.db.URL(addr, "sslmode=disable"))
	_, err := app.Exec(ctx, "CREATE TABLE cov_report (id text PRIMARY KEY, secret_body text, embedding vector(3))")
	require.NoError(t, err)
	_, err = app.Exec(ctx, "INSERT INTO cov_report VALUES ('r1', 'do-not-log-me', '[1,2,3]')")
	require.NoError(t, err, "report mode refuses nothing")
	// More DDL through the proxy: each makes the catalog be read again.
	for i := range 3 {
		_, err = app.Exec(ctx, fmt.Sprintf("CREATE TABLE cov_other_%d (id int)", i))
		require.NoError(t, err)
		_, err = app.Exec(ctx, "SELECT 1")
		require.NoError(t, err)
	}
	const logged = "table=public.cov_report"
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(proxyLog(t, cfg), logged) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	logs := proxyLog(t, cfg)
	assert.Equal(t, 1, strings.Count(logs, logged), logs)
	assert.Contains(t, logs, "coverage=reported")
	assert.NotContains(t, logs, "do-not-log-me")
	var n int
	require.NoError(t, app.QueryRow(ctx, "SELECT count(*) FROM cov_report").Scan(&n))
	assert.Equal(t, 1, n)
}
