//go:build integration

package integration

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
)

// Logs never contain statements, rows or subjects (README, log.format).
// Every log line the suite produces (in-process relays, captures, engines
// and ledgers, and the lethe-proxy processes it starts) also goes to
// suiteLogs; TestMain scans it after the run and fails the run on a leak.

// suiteSubjects matches every subject the integration tests write: the
// names below and any address at example.com. A test that writes a new
// kind of subject adds it here.
var suiteSubjects = regexp.MustCompile(`(?i)\b(alice|bob|carol|ann)\b|[a-z0-9._%+-]+@example\.com|x' OR '1'='1|al'ice`)

// statementFragments matches SQL that only a statement (or a row quoted
// from one) would put in a log line.
var statementFragments = regexp.MustCompile(`(?i)\b(insert\s+into|delete\s+from|values\s*\(|update\s+\S+\s+set|copy\s+\S+\s*(\([^)]*\)\s*)?from\s+stdin|select\s+\S+.*\s+from|drop\s+table)\b`)

// logSink collects log lines from every goroutine of the suite.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

var suiteLogs logSink

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// add appends the log of a lethe-proxy process.
func (s *logSink) add(logs string) {
	if logs != "" && !strings.HasSuffix(logs, "\n") {
		logs += "\n"
	}
	s.Write([]byte(logs))
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// logLeaks returns the lines of logs that hold a subject of the suite or
// statement text.
func logLeaks(logs string) []string {
	var leaks []string
	for _, line := range strings.Split(logs, "\n") {
		if suiteSubjects.MatchString(line) || statementFragments.MatchString(line) {
			leaks = append(leaks, line)
		}
	}
	return leaks
}

var collected sync.Map // log file paths collectLogFile was given

// collectLogFile adds the log file of lethe-proxy processes to suiteLogs
// when the test ends: register it before starting the process, so that it
// runs after the process is killed. Later calls for the same file do nothing.
func collectLogFile(t testing.TB, path string) {
	if _, seen := collected.LoadOrStore(path, true); seen {
		return
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(path); err == nil {
			suiteLogs.add(string(b))
		}
	})
}

func TestMain(m *testing.M) {
	// Components given no logger use the default one: keep its output on
	// stderr and send everything, debug included, to the sink as well.
	slog.SetDefault(slog.New(slog.NewMultiHandler(
		slog.NewTextHandler(os.Stderr, nil),
		slog.NewTextHandler(&suiteLogs, &slog.HandlerOptions{Level: slog.LevelDebug}),
	)))
	code := m.Run()
	if leaks := logLeaks(suiteLogs.String()); len(leaks) > 0 {
		reportLeaks(os.Stderr, leaks)
		code = 1
	}
	os.Exit(code)
}

func reportLeaks(w io.Writer, leaks []string) {
	fmt.Fprintf(w, "FAIL: %d log lines hold a subject or statement text (logs must never contain statements, rows or subjects):\n", len(leaks))
	for i, l := range leaks {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more\n", len(leaks)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func TestLogLeaks_FindsPlantedSubjectsAndStatements(t *testing.T) {
	clean := []string{
		`time=2026-12-01T15:00:00Z level=INFO msg="statement refused" session=3 code=LT001 reason="unattributable write: it names a configured table but could not be parsed: extract: parse: unterminated quoted string at character 46"`,
		`{"level":"WARN","msg":"write about a forgotten subject refused","table":"public.docs","subject_hmac":"9f86d081884c7d65"}`,
		`level=INFO msg="forget: completed" request=4b1d certify_took=3ms`,
		`level=INFO msg="server-side writers of configured tables" functions=1 triggers_and_rules=2`,
		`level=DEBUG msg="session ended" client_err=EOF server_err="read tcp: use of closed network connection"`,
	}
	leaky := []string{
		`level=INFO msg="statement refused" reason="syntax error at or near \"'secret@example.com'\""`,
		`level=INFO msg="statement refused" reason="unterminated quoted string at or near \"'user1@example.com\""`,
		`level=ERROR msg="forget: request failed" err="invalid input syntax for type uuid: \"alice\""`,
		`level=WARN msg="x" err="Key (user_id)=(Bob) already exists"`,
		`level=INFO msg="x" stmt="INSERT INTO notes (id) VALUES ($1)"`,
		`level=INFO msg="x" stmt="insert into notes select 1"`,
		`level=INFO msg="x" stmt="DELETE FROM notes WHERE id = 1"`,
		`level=INFO msg="x" stmt="UPDATE notes SET body = 'x'"`,
		`level=INFO msg="x" stmt="COPY notes (id, body) FROM STDIN"`,
		`level=INFO msg="x" stmt="SELECT id FROM notes"`,
		`level=INFO msg="x" subject="x' OR '1'='1'"`,
		`level=INFO msg="x" err="invalid input: al'ice\")"`,
		`level=INFO msg="x" stmt="DROP TABLE y"`,
		`level=INFO msg="x" id=lcpg-alice-3`,
	}
	logs := strings.Join(clean, "\n")
	if got := logLeaks(logs); len(got) != 0 {
		t.Errorf("clean lines reported as leaks: %q", got)
	}
	for _, line := range leaky {
		if got := logLeaks(logs + "\n" + line + "\n"); len(got) != 1 || got[0] != line {
			t.Errorf("planted line not found exactly: %q gave %q", line, got)
		}
	}
}

// TestCapture_RefusedStatementLogsNeitherSubjectNorStatement sends, in
// strict mode, writes to a configured table that do not parse, with a
// subject inside the faulty text: the client is told what the parser said,
// the log says only that it did not parse, and where.
func TestCapture_RefusedStatementLogsNeitherSubjectNorStatement(t *testing.T) {
	db := loadTestDB(t)
	compiled, err := extract.NewRules(docsTable(t, db, "log_notes"))
	require.NoError(t, err)
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	var logs lockedBuffer
	logger := slog.New(slog.NewMultiHandler(
		slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}),
		slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	c := capture.New(capture.Config{Rules: compiled, Ledger: l, Hasher: h, Mode: capture.Strict, Logger: logger, ConfirmHold: testConfirmHold})
	t.Cleanup(func() { c.Close(); l.Close() })
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer, s.Logger = pgcapture.New(c, pgcapture.Config{}), logger })
	conn := connect(t, db.URL(p.Addr, ""))
	from := len(suiteLogs.String())

	const subject = "secret@example.com"
	cases := []struct{ sql, fault string }{
		{"INSERT INTO log_notes (id, user_id) VALUES ('n1', '" + subject, "unterminated quoted string"},
		{"INSERT INTO log_notes (id, user_id) VALUES ('n1' '" + subject + "')", "syntax error"},
	}
	for _, tc := range cases {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			_, err := conn.Exec(ctxT(t), tc.sql, mode)
			require.Error(t, err, tc.sql)
			assert.Equal(t, capture.CodeUnattributed, pgCode(err), tc.sql)
			assert.Contains(t, pgMessage(err), subject, "the client is shown the parser's message in full")
		}
	}
	assert.Equal(t, 0, countRows(t, db, "log_notes"))

	out := logs.String()
	assert.Equal(t, 2*len(cases), strings.Count(out, `msg="statement refused"`), out)
	for _, tc := range cases {
		assert.Contains(t, out, tc.fault, "the log says what kind of fault it was")
	}
	assert.NotContains(t, out, "secret")
	assert.NotContains(t, out, "example.com")
	assert.NotContains(t, out, "INSERT")
	assert.NotContains(t, out, "VALUES")
	assert.Empty(t, logLeaks(out))
	assert.Contains(t, suiteLogs.String()[from:], `msg="statement refused"`, "the harness's loggers feed the suite's scan")
}

// TestForget_StoreErrorQuotingTheSubjectStaysOutOfTheLogs makes the store
// refuse forget's delete with an error that quotes the subject (a trigger
// of the application raising it): the engine logs the failure with its
// SQLSTATE, never the subject.
func TestForget_StoreErrorQuotingTheSubjectStaysOutOfTheLogs(t *testing.T) {
	db := loadTestDB(t)
	ctx := ctxT(t)
	schema, rules, tables := forgetTables(t, db)
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctx, fmt.Sprintf(`
		CREATE FUNCTION %[1]s.keep_memories() RETURNS trigger LANGUAGE plpgsql
			AS $$ BEGIN RAISE EXCEPTION 'the memories of %% are kept', OLD.user_id; END $$;
		CREATE TRIGGER keep BEFORE DELETE ON %[1]s.memories FOR EACH ROW EXECUTE FUNCTION %[1]s.keep_memories();`, schema))
	require.NoError(t, err)
	rig := startForgetRig(t, db, rules, tables, sqliteLedger)
	writeForgetData(t, db.URL(rig.proxy.Addr, "sslmode=disable"), schema)
	rig.settle(t)

	from := len(suiteLogs.String())
	pv, err := rig.engine.Preview(ctx, "alice")
	require.NoError(t, err)
	receipt, err := rig.engine.Forget(ctx, "alice", pv.Token)
	require.NoError(t, err)
	var logs string
	for range 500 {
		if logs = suiteLogs.String()[from:]; strings.Contains(logs, "forget: request interrupted") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Contains(t, logs, "forget: request interrupted", "the delete failed")
	assert.Contains(t, logs, "SQLSTATE P0001")
	assert.NotContains(t, logs, "alice")
	assert.NotContains(t, logs, "are kept", "the application's own error text is withheld")
	st, err := rig.engine.Status(ctx, receipt.RequestID)
	require.NoError(t, err)
	assert.NotContains(t, st.Error, "alice")
}
