//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// The wire side must never read a statement differently from the server:
// every write below is either tagged as the server stored it or refused,
// never committed untracked.

// storedRows asks the server directly for table's rows: user_id by id.
func storedRows(t *testing.T, db testDB, table string) map[string]string {
	t.Helper()
	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctxT(t), "SELECT id, user_id FROM "+table)
	require.NoError(t, err)
	out := map[string]string{}
	for rows.Next() {
		var id, user string
		require.NoError(t, rows.Scan(&id, &user))
		out[id] = user
	}
	require.NoError(t, rows.Err())
	return out
}

// requireAllTagged checks that every row the server holds in table is in
// the ledger, confirmed under the subject the server stored, and returns
// the ids.
func requireAllTagged(t *testing.T, c *captured, db testDB, table string) []string {
	t.Helper()
	var ids []string
	for id, user := range storedRows(t, db, table) {
		assert.Contains(t, c.confirmed(t, "public."+table, user), id, "row %s committed untracked (or under another subject)", id)
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// simple runs sql as one simple-protocol Query and returns its first error.
func simple(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	_, err := conn.Exec(ctx, sql).ReadAll()
	return err
}

// requireRefused checks that err is the proxy's LT001 refusal naming what
// to change.
func requireRefused(t *testing.T, err error, setting string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, capture.CodeUnattributed, pgCode(err), "%v", err)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		assert.Contains(t, pgErr.Message+" "+pgErr.Hint, setting)
	}
}

// hostile is the probe's statement: with standard_conforming_strings on
// it is one SELECT of one string; with it off, the first string ends at
// its third quote (the backslash escapes the second) and the INSERT runs.
func hostile(table, id string) string {
	return fmt.Sprintf(`select 'x\''; insert into %s (id, user_id) values ($$%s$$, $$ann$$); select 1 --'`, table, id)
}

func TestReading_StandardConformingStringsOffIsRefusedUntilReset(t *testing.T) {
	db := loadTestDB(t)
	const table = "rd_scs"
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, table))
	extExec(t, db, `CREATE OR REPLACE FUNCTION lethe_scs_off() RETURNS void LANGUAGE sql AS $$ SELECT set_config('standard_conforming_strings', 'off', false) $$`)
	conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol")).PgConn()
	ctx := ctxT(t)
	insert := func(id, user string) string {
		return fmt.Sprintf("INSERT INTO %s (id, user_id) VALUES ('%s', '%s')", table, id, user)
	}

	require.NoError(t, simple(ctx, conn, "SET standard_conforming_strings = off"))
	requireRefused(t, simple(ctx, conn, hostile(table, "h1")), "standard_conforming_strings")
	requireRefused(t, simple(ctx, conn, insert("h2", `a\'b`)), "standard_conforming_strings")
	require.NoError(t, simple(ctx, conn, insert("p1", "ann")), "no backslash: read alike")
	require.NoError(t, simple(ctx, conn, `SELECT 'not\'ours'`), "a statement capture does not follow passes")

	require.NoError(t, simple(ctx, conn, "RESET standard_conforming_strings"))
	require.NoError(t, simple(ctx, conn, insert("p2", `b\`)), "on again: captured")

	// Changed where the client's text does not say so: in a function, by
	// SET LOCAL (undone by the rollback).
	require.NoError(t, simple(ctx, conn, "SELECT lethe_scs_off()"))
	requireRefused(t, simple(ctx, conn, hostile(table, "h3")), "standard_conforming_strings")
	require.NoError(t, simple(ctx, conn, "RESET standard_conforming_strings"))
	require.NoError(t, simple(ctx, conn, "BEGIN"))
	require.NoError(t, simple(ctx, conn, "SET LOCAL standard_conforming_strings = off"))
	requireRefused(t, simple(ctx, conn, hostile(table, "h4")), "standard_conforming_strings")
	require.NoError(t, simple(ctx, conn, "ROLLBACK"))
	require.NoError(t, simple(ctx, conn, insert("p3", `c\`)))

	// Through the extended protocol: a Parse read while it is off.
	require.NoError(t, simple(ctx, conn, "SET standard_conforming_strings = off"))
	_, err := conn.Prepare(ctx, "ins", fmt.Sprintf(`INSERT INTO %s (id, user_id) VALUES ($1, 'd\')`, table), nil)
	requireRefused(t, err, "standard_conforming_strings")
	require.NoError(t, simple(ctx, conn, "RESET standard_conforming_strings"))

	assert.Equal(t, []string{"p1", "p2", "p3"}, requireAllTagged(t, c, db, table))
}

// The setting may come off at startup (the options parameter, a role's
// or database's default): the server's first reports say so.
func TestReading_StandardConformingStringsOffAtStartupIsFollowed(t *testing.T) {
	db := loadTestDB(t)
	const table = "rd_startup"
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, table))
	conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol&options=-c%20standard_conforming_strings%3Doff")).PgConn()
	ctx := ctxT(t)
	requireRefused(t, simple(ctx, conn, hostile(table, "h1")), "standard_conforming_strings")
	require.NoError(t, simple(ctx, conn, "RESET standard_conforming_strings"))
	require.NoError(t, simple(ctx, conn, "SET standard_conforming_strings = on"))
	require.NoError(t, simple(ctx, conn, fmt.Sprintf(`INSERT INTO %s (id, user_id) VALUES ('p1', 'a')`, table)))
	assert.Equal(t, []string{"p1"}, requireAllTagged(t, c, db, table))
}

// A statement sent before the answers to one that turns the setting off
// is read by the server after it: the proxy cannot wait for the report.
func TestReading_PipelinedStatementAfterAChangeIsRefused(t *testing.T) {
	db := loadTestDB(t)
	const table = "rd_pipe"
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, table))
	extExec(t, db, `CREATE OR REPLACE FUNCTION lethe_scs_off() RETURNS void LANGUAGE sql AS $$ SELECT set_config('standard_conforming_strings', 'off', false) $$`)
	conn := connect(t, db.URL(c.Addr, "")).PgConn()
	ctx := ctxT(t)

	fe := conn.Frontend()
	fe.Send(&pgproto3.Query{String: "SELECT lethe_scs_off()"})
	fe.Send(&pgproto3.Query{String: hostile(table, "h1")})
	require.NoError(t, fe.Flush())
	var errs []string
	for ready := 0; ready < 2; {
		m, err := conn.ReceiveMessage(ctx)
		require.NoError(t, err)
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			errs = append(errs, m.Code)
		case *pgproto3.ReadyForQuery:
			ready++
		}
	}
	assert.Equal(t, []string{capture.CodeUnattributed}, errs)
	assert.Empty(t, requireAllTagged(t, c, db, table))
}

// In SJIS, 0x95 0x5C is one character (表) whose second byte is a
// backslash to a reader of UTF-8: E'表' closes where the proxy would read
// an escaped quote.
func TestReading_ClientOnlyEncodingRefusesWritesToConfiguredTables(t *testing.T) {
	db := loadTestDB(t)
	const table = "rd_sjis"
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, table))
	conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol")).PgConn()
	ctx := ctxT(t)

	_, err := conn.Prepare(ctx, "ins", "INSERT INTO "+table+" (id, user_id) VALUES ($1, $2)", nil)
	require.NoError(t, err)
	for _, enc := range []string{"SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "SHIFT_JIS_2004"} {
		require.NoError(t, simple(ctx, conn, "SET client_encoding = '"+enc+"'"))
		requireRefused(t, simple(ctx, conn, "INSERT INTO "+table+" (id, user_id) VALUES ('x-"+enc+"', 'ann')"), "client_encoding")
	}
	require.NoError(t, simple(ctx, conn, "SET client_encoding = 'SJIS'"))
	// Prepared before the change: its parameters are converted too.
	_, err = conn.ExecPrepared(ctx, "ins", [][]byte{[]byte("h2"), []byte("\x95\x5c")}, nil, nil).Close()
	requireRefused(t, err, "client_encoding")
	requireRefused(t, simple(ctx, conn, fmt.Sprintf("select E'\x95\\'; insert into %s (id, user_id) values ($$h1$$, $$ann$$); select 1 --'", table)), "client_encoding")
	require.NoError(t, simple(ctx, conn, "SELECT 1"), "a statement naming nothing configured passes")
	require.NoError(t, simple(ctx, conn, "SET client_encoding = 'UTF8'"))
	require.NoError(t, simple(ctx, conn, "INSERT INTO "+table+" (id, user_id) VALUES ('p1', 'Zoë')"))

	assert.Equal(t, []string{"p1"}, requireAllTagged(t, c, db, table))
}

// Statements over 64 KB go through the literal-eliding scanner: where it
// could part from PostgreSQL's lexer, the rows are tagged as stored.
func TestReading_LongStatementsAreTaggedAsTheServerReadsThem(t *testing.T) {
	db := loadTestDB(t)
	const table = "rd_long"
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, table))
	conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol")).PgConn()
	ctx := ctxT(t)
	big := vectorText(12000)
	require.Greater(t, len(big), 64<<10)

	for _, st := range []struct {
		sql     string
		refused bool
	}{
		// A non-ASCII dollar tag around a quoted number array.
		{sql: fmt.Sprintf("INSERT INTO %s (id, user_id) VALUES ('e1', $é$ '%s' $é$)", table, big)},
		// A literal continued on the next line.
		{sql: fmt.Sprintf("INSERT INTO %s (id, user_id) VALUES ('e2', '%s'\n'%s')", table, big, big)},
		// A name before a quote is no E prefix.
		{sql: fmt.Sprintf(`INSERT INTO %s (id, user_id, meta) VALUES ('e3', name'\', '%s'), ('e4', 'ann', NULL)`, table, big)},
		// A line comment ended by a carriage return.
		{sql: fmt.Sprintf("INSERT INTO %s (id, user_id, meta) VALUES ('e5', 'bob', '%s') -- c\r, ('e6', 'eve', '%s')", table, big, big)},
		// The probe's writable CTE: strict mode refuses it, however it is read.
		{sql: fmt.Sprintf(`WITH w AS (INSERT INTO %s (id, user_id) VALUES ('h1', name'\'), ('h2', 'ann') RETURNING 1) SELECT '%s', count(*) FROM w`, table, big), refused: true},
	} {
		err := simple(ctx, conn, st.sql)
		if st.refused {
			assert.Equal(t, capture.CodeUnattributed, pgCode(err))
		} else if err != nil {
			t.Fatalf("%.300s", err)
		}
	}
	assert.Equal(t, []string{"e1", "e2", "e3", "e4", "e5", "e6"}, requireAllTagged(t, c, db, table))
}

// vectorText is a number-array literal's text of n numbers.
func vectorText(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%d.%03d", i%7, i%1000)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
