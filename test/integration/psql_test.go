//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// This file also holds the helpers that run external client programs (psql,
// pgbench, Python, Node) for the client tests in this package; their names
// start with "ext".

// extTimeout bounds every external client run.
const extTimeout = 2 * time.Minute

// extResult is what an external client program did.
type extResult struct {
	Stdout, Stderr string
	Exit           int
}

func (r extResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout ---\n%s\n--- stderr ---\n%s", r.Exit, r.Stdout, r.Stderr)
}

// extEnv is the environment for a client connecting to addr (the server or a
// proxy) as user, through libpq's variables. Inherited PG* variables are
// dropped so that nothing outside the test steers the client; password ""
// sets no PGPASSWORD.
func extEnv(db testDB, addr, user, password string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG") {
			continue
		}
		env = append(env, kv)
	}
	host, port, _ := strings.Cut(addr, ":")
	env = append(env,
		"PGHOST="+host, "PGPORT="+port, "PGUSER="+user, "PGDATABASE="+db.DB,
		"PGCONNECT_TIMEOUT=10", "PGGSSENCMODE=disable", "PGAPPNAME=lethe-integration",
		"LC_ALL=C.UTF-8", // untranslated messages, UTF-8 output
	)
	if password != "" {
		env = append(env, "PGPASSWORD="+password)
	}
	return env
}

// extRun runs a client program in dir (the test's working directory when
// empty) and returns what it did; it fails the test only when the program
// cannot be started or outlives extTimeout.
func extRun(t testing.TB, dir string, env []string, name string, args ...string) extResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), extTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := extResult{Stdout: stdout.String(), Stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %v\n%s", name, strings.Join(args, " "), extTimeout, res)
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.Exit = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s %s: exit %d in %v", filepath.Base(name), strings.Join(args, " "), res.Exit, time.Since(start).Round(time.Millisecond))
	return res
}

// extExec runs statements directly on the server (not through a proxy), for
// setup and cleanup.
func extExec(t testing.TB, db testDB, stmts ...string) {
	t.Helper()
	conn := connect(t, db.DSN(db.Addr(), ""))
	for _, s := range stmts {
		_, err := conn.Exec(ctxT(t), s)
		require.NoError(t, err, s)
	}
	require.NoError(t, conn.Close(context.Background()))
}

// extDropTables drops tables now (left over from an interrupted run) and
// again when the test ends.
func extDropTables(t testing.TB, db testDB, tables ...string) {
	t.Helper()
	drop := "DROP TABLE IF EXISTS " + strings.Join(tables, ", ")
	extExec(t, db, drop)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), db.DSN(db.Addr(), "connect_timeout=10"))
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), drop); err != nil {
			t.Errorf("cleanup %s: %v", drop, err)
		}
	})
}

// extEqual compares two possibly large outputs and, when they differ,
// reports the first differing line with some context instead of both whole.
func extEqual(t testing.TB, want, got, what string) {
	t.Helper()
	if want == got {
		return
	}
	wl, gl := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	excerpt := func(lines []string) string {
		return strings.Join(lines[max(0, i-3):min(len(lines), i+12)], "")
	}
	t.Fatalf("%s: differs at line %d (want %d lines/%d bytes, got %d lines/%d bytes)\n--- want (excerpt) ---\n%s--- got (excerpt) ---\n%s",
		what, i+1, len(wl), len(want), len(gl), len(got), excerpt(wl), excerpt(gl))
}

// extPsqlArgs are the options every psql run uses: no psqlrc, never prompt for
// a password, unaligned output.
var extPsqlArgs = []string{"-X", "-w", "-A", "-v", "ON_ERROR_STOP=0"}

func extPsql(t testing.TB, dir string, env []string, args ...string) extResult {
	t.Helper()
	return extRun(t, dir, env, "psql", append(append([]string{}, extPsqlArgs...), args...)...)
}

// TestPsqlQueries runs one psql script directly and through the proxy:
// simple queries, a multi-statement Query message (one implicit transaction,
// aborted by an error), a notice, an explicit transaction that fails and is
// rolled back, and an inline COPY FROM STDIN. Both runs must print the same
// thing, and that must be the expected output.
func TestPsqlQueries(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	const table = "lethe_psql_queries"
	extDropTables(t, db, table)

	dir := t.TempDir()
	// A result of a few thousand DataRows, and what psql prints for it.
	const big = "SELECT g, md5(g::text) FROM generate_series(1, 3000) AS g;\n"
	var bigWant strings.Builder
	bigWant.WriteString("g|md5\n")
	for g := 1; g <= 3000; g++ {
		fmt.Fprintf(&bigWant, "%d|%x\n", g, md5.Sum([]byte(fmt.Sprint(g))))
	}
	bigWant.WriteString("(3000 rows)\n")

	script := strings.ReplaceAll(`CREATE TABLE {{T}} (id int PRIMARY KEY, name text);
SELECT 1 AS one, 'héllo'::text AS greeting, NULL::int AS nothing;
SELECT 1 AS a \; SELECT 2 AS b \; INSERT INTO {{T}} VALUES (1, 'one');
INSERT INTO {{T}} VALUES (10, 'ten') \; SELECT 1/0 \; SELECT 'never';
DO $$ BEGIN RAISE NOTICE 'hello from %', 'plpgsql'; END $$;
BEGIN;
INSERT INTO {{T}} VALUES (2, 'two');
SELECT 1/0;
SELECT 'ignored';
ROLLBACK;
COPY {{T}} FROM STDIN;
3	three
4	\N
\.
SELECT id, coalesce(name, '<null>') AS name FROM {{T}} ORDER BY id;
`+big+`DROP TABLE {{T}};
`, "{{T}}", table)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script.sql"), []byte(script), 0o644))

	wantStdout := `CREATE TABLE
one|greeting|nothing
1|héllo|
(1 row)
a
1
(1 row)
b
2
(1 row)
INSERT 0 1
INSERT 0 1
DO
BEGIN
INSERT 0 1
ROLLBACK
COPY 2
id|name
1|one
3|three
4|<null>
(3 rows)
` + bigWant.String() + `DROP TABLE
`
	wantStderr := `psql:script.sql:4: ERROR:  division by zero
psql:script.sql:5: NOTICE:  hello from plpgsql
psql:script.sql:8: ERROR:  division by zero
psql:script.sql:9: ERROR:  current transaction is aborted, commands ignored until end of transaction block
`
	var results []extResult
	for _, addr := range []string{db.Addr(), p.Addr} {
		res := extPsql(t, dir, extEnv(db, addr, db.User, db.Password), "-f", "script.sql")
		require.Equal(t, 0, res.Exit, "%s", res)
		extEqual(t, wantStdout, res.Stdout, "stdout")
		extEqual(t, wantStderr, res.Stderr, "stderr")
		results = append(results, res)
	}
	extEqual(t, results[0].String(), results[1].String(), "psql through the proxy vs direct")
}

// psqlCopyTextRows builds n rows of COPY text format in canonical form (what
// COPY TO prints back): escapes, NULLs, non-ASCII text and numerics.
func psqlCopyTextRows(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		note := fmt.Sprintf("note %d", i)
		switch {
		case i%13 == 0:
			note = `\N`
		case i%11 == 0:
			note = fmt.Sprintf(`tab\there back\\slash %d`, i)
		case i%7 == 0:
			note = fmt.Sprintf(`line\nbreak é✓ %d`, i)
		}
		fmt.Fprintf(&b, "%d\tname-%d\t%s\t%d.%02d\n", i, i, note, i*3, i%100)
	}
	return b.String()
}

// psqlCopyCSVRows builds n rows of CSV in the form COPY TO prints back: fields
// quoted only when they must be, empty strings quoted, NULLs empty.
func psqlCopyCSVRows(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		note := fmt.Sprintf("plain %d", i)
		switch {
		case i%17 == 0:
			note = "" // NULL
		case i%13 == 0:
			note = `""` // empty string
		case i%11 == 0:
			note = fmt.Sprintf(`"say ""hi"", %d"`, i)
		case i%7 == 0:
			note = fmt.Sprintf("\"two\nlines %d\"", i)
		case i%5 == 0:
			note = fmt.Sprintf("ünïcødé %d", i)
		}
		flag := "f"
		if i%2 == 0 {
			flag = "t"
		}
		fmt.Fprintf(&b, "%d,%s,%s\n", i, note, flag)
	}
	return b.String()
}

// TestPsqlCopy moves ~20k rows in and out with psql's \copy (text and CSV,
// from and to files and to stdout) directly and through the proxy; the data
// must survive the round trip byte for byte and both runs must agree.
func TestPsqlCopy(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	const rows = 20000
	const tText, tCSV = "lethe_psql_copy_text", "lethe_psql_copy_csv"
	extDropTables(t, db, tText, tCSV)

	base := t.TempDir()
	textIn, csvIn := psqlCopyTextRows(rows), psqlCopyCSVRows(rows)
	require.Greater(t, len(textIn), 4*65536, "the text input must span many CopyData messages")
	require.NoError(t, os.WriteFile(filepath.Join(base, "in.txt"), []byte(textIn), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "in.csv"), []byte(csvIn), 0o644))
	script := strings.NewReplacer("TTEXT", tText, "TCSV", tCSV).Replace(`
CREATE TABLE TTEXT (id int PRIMARY KEY, name text NOT NULL, note text, amount numeric);
CREATE TABLE TCSV (id int PRIMARY KEY, note text, flag boolean);
\copy TTEXT FROM '../in.txt'
\copy TCSV FROM '../in.csv' WITH (FORMAT csv)
SELECT count(*), count(note), sum(id), sum(amount) FROM TTEXT;
SELECT count(*), count(note), count(*) FILTER (WHERE note = ''), count(*) FILTER (WHERE flag) FROM TCSV;
\copy TTEXT TO 'out.txt'
\copy (SELECT * FROM TCSV ORDER BY id) TO 'out.csv' WITH (FORMAT csv)
\copy (SELECT * FROM TTEXT ORDER BY id) TO STDOUT
DROP TABLE TTEXT, TCSV;
`)
	require.NoError(t, os.WriteFile(filepath.Join(base, "copy.sql"), []byte(script), 0o644))

	// Expected aggregates, computed here from the generated input.
	var sumID, nullNotes, sumAmountCents int
	for i := 1; i <= rows; i++ {
		sumID += i
		sumAmountCents += i*3*100 + i%100
		if i%13 == 0 {
			nullNotes++
		}
	}
	var csvNull, csvEmpty int
	for i := 1; i <= rows; i++ {
		switch {
		case i%17 == 0:
			csvNull++
		case i%13 == 0:
			csvEmpty++
		}
	}
	wantStdout := fmt.Sprintf(`CREATE TABLE
CREATE TABLE
COPY %[1]d
COPY %[1]d
count|count|sum|sum
%[1]d|%[2]d|%[3]d|%[4]d.%02[5]d
(1 row)
count|count|count|count
%[1]d|%[6]d|%[7]d|%[8]d
(1 row)
COPY %[1]d
COPY %[1]d
%[9]sDROP TABLE
`, rows, rows-nullNotes, sumID, sumAmountCents/100, sumAmountCents%100, rows-csvNull, csvEmpty, rows/2, textIn)

	var outs []extResult
	for i, addr := range []string{db.Addr(), p.Addr} {
		dir := filepath.Join(base, []string{"direct", "proxy"}[i])
		require.NoError(t, os.Mkdir(dir, 0o755))
		res := extPsql(t, dir, extEnv(db, addr, db.User, db.Password), "-f", "../copy.sql")
		require.Equal(t, 0, res.Exit, "%s", res)
		require.Empty(t, res.Stderr)
		extEqual(t, wantStdout, res.Stdout, "stdout")
		gotText, err := os.ReadFile(filepath.Join(dir, "out.txt"))
		require.NoError(t, err)
		// COPY of a whole table follows the heap, whose order COPY FROM's
		// bulk insert does not promise: compare the rows as a set.
		extEqual(t, extSortedLines(textIn), extSortedLines(string(gotText)), "text COPY round trip")
		gotCSV, err := os.ReadFile(filepath.Join(dir, "out.csv"))
		require.NoError(t, err)
		extEqual(t, csvIn, string(gotCSV), "CSV COPY round trip")
		outs = append(outs, res)
	}
	extEqual(t, outs[0].String(), outs[1].String(), "psql through the proxy vs direct")
}

func extSortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// TestPsqlAuth logs in through the proxy with every authentication method
// the test cluster uses, and checks that a wrong password fails with the
// server's own error.
func TestPsqlAuth(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)

	for _, tc := range []struct{ user, password, method string }{
		{db.User, db.Password, "scram-sha-256"},
		{"lethe_md5", "md5-pw", "md5"},
		{"lethe_password", "plain-pw", "password"},
		{"lethe_trust", "", "trust"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			for _, sslmode := range []string{"disable", "prefer"} {
				res := extPsql(t, "", extEnv(db, p.Addr, tc.user, tc.password),
					"-t", "-c", "SELECT current_user", "sslmode="+sslmode)
				require.Equal(t, 0, res.Exit, "%s", res)
				require.Equal(t, tc.user+"\n", res.Stdout)
				require.Empty(t, res.Stderr)
			}
		})
	}

	for _, user := range []string{db.User, "lethe_md5", "lethe_password"} {
		t.Run("wrong password/"+user, func(t *testing.T) {
			want := fmt.Sprintf(`FATAL:  password authentication failed for user "%s"`, user)
			for _, addr := range []string{db.Addr(), p.Addr} {
				res := extPsql(t, "", extEnv(db, addr, user, ""),
					"-c", "SELECT 1", "sslmode=disable password=wrong-pw")
				require.Equal(t, 2, res.Exit, "%s", res) // psql: connection failed
				require.Empty(t, res.Stdout)
				require.Contains(t, res.Stderr, want)
				require.Contains(t, res.Stderr, "connection to server at \"127.0.0.1\", port "+strings.Split(addr, ":")[1]+" failed")
			}
		})
	}
}
