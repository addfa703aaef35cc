//go:build integration

package integration

import (
	"context"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// spSchema holds an unconfigured table of the same name as the configured
// public one: a session whose search_path names spSchema writes there.
const spSchema = "lethe_sp"

// searchPathTables creates public.<name> (configured) and
// lethe_sp.<name> (not), and returns a capturing proxy for them.
func searchPathTables(t *testing.T, db testDB, name string) *captured {
	t.Helper()
	rules := docsTable(t, db, name)
	extExec(t, db, "CREATE SCHEMA IF NOT EXISTS "+spSchema,
		"DROP TABLE IF EXISTS "+spSchema+"."+name,
		"CREATE TABLE "+spSchema+"."+name+" (id text PRIMARY KEY, user_id text, meta jsonb)")
	t.Cleanup(func() {
		c := connect(t, db.URL(db.Addr(), ""))
		c.Exec(context.Background(), "DROP TABLE IF EXISTS "+spSchema+"."+name)
	})
	return startCaptureProxy(t, db, capture.Strict, rules)
}

// rowsBySchema asks the server directly where each row of table is:
// "schema:id", sorted.
func rowsBySchema(t *testing.T, db testDB, table string) []string {
	t.Helper()
	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctxT(t),
		"SELECT 'public:' || id FROM public."+table+" UNION ALL SELECT '"+spSchema+":' || id FROM "+spSchema+"."+table)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	sort.Strings(out)
	return out
}

// searchPathModes runs f once per way pgx sends statements: prepared
// statements cached by text (bound again under whatever search_path the
// session has by then) and the simple protocol.
func searchPathModes(t *testing.T, f func(t *testing.T, table string, mode string)) {
	for _, mode := range []struct{ name, table string }{
		{"cache_statement", "sp_cached"},
		{"simple_protocol", "sp_simple"},
	} {
		t.Run(mode.name, func(t *testing.T) { f(t, mode.table, "default_query_exec_mode="+mode.name) })
	}
}

// (1) A SET inside a transaction that rolls back is undone: the INSERT
// after it writes public.<table> and must be tagged.
func TestSearchPath_RolledBackSetIsUndone(t *testing.T) {
	db := loadTestDB(t)
	searchPathModes(t, func(t *testing.T, table, mode string) {
		c := searchPathTables(t, db, table)
		conn := connect(t, db.URL(c.Addr, mode))
		ctx := ctxT(t)
		insert := "INSERT INTO " + table + " (id, user_id) VALUES ($1, $2)"
		for _, step := range []struct {
			sql  string
			args []any
		}{
			{"BEGIN", nil},
			{"SET search_path TO " + spSchema, nil},
			{insert, []any{"o1", "ann"}}, // lethe_sp: rolled back below
			{"ROLLBACK", nil},
			{insert, []any{"p1", "ann"}}, // public again: pgx binds the statement prepared under lethe_sp
		} {
			_, err := conn.Exec(ctx, step.sql, step.args...)
			require.NoError(t, err, step.sql)
		}
		assert.Equal(t, []string{"public:p1"}, rowsBySchema(t, db, table), "where the server put the rows")
		assert.Equal(t, []string{"p1:confirmed"}, c.states(t, "public."+table, "ann"))
	})
}

// (2) ROLLBACK TO SAVEPOINT undoes the SETs made after the savepoint;
// RELEASE keeps them, and so does the COMMIT after it.
func TestSearchPath_SavepointsUndoAndKeepSets(t *testing.T) {
	db := loadTestDB(t)
	searchPathModes(t, func(t *testing.T, table, mode string) {
		c := searchPathTables(t, db, table)
		conn := connect(t, db.URL(c.Addr, mode))
		ctx := ctxT(t)
		insert := "INSERT INTO " + table + " (id, user_id) VALUES ($1, $2)"
		for _, step := range []struct {
			sql  string
			args []any
		}{
			{"BEGIN", nil},
			{"SAVEPOINT s1", nil},
			{"SET search_path TO " + spSchema, nil},
			{"SAVEPOINT s2", nil},
			{"SET LOCAL search_path TO public", nil},
			{"RELEASE SAVEPOINT s2", nil},
			{insert, []any{"p0", "ann"}}, // public (SET LOCAL), rolled back below
			{"ROLLBACK TO SAVEPOINT s1", nil},
			{insert, []any{"p1", "ann"}}, // public: the SET after s1 is undone
			{"SAVEPOINT s3", nil},
			{"SET search_path TO " + spSchema, nil},
			{"RELEASE s3", nil},
			{insert, []any{"o1", "ann"}}, // lethe_sp: RELEASE keeps the SET
			{"COMMIT", nil},
			{insert, []any{"o2", "ann"}}, // lethe_sp: the COMMIT kept it
		} {
			_, err := conn.Exec(ctx, step.sql, step.args...)
			require.NoError(t, err, step.sql)
		}
		assert.Equal(t, []string{"lethe_sp:o1", "lethe_sp:o2", "public:p1"}, rowsBySchema(t, db, table), "where the server put the rows")
		assert.Equal(t, []string{"p1:confirmed"}, c.states(t, "public."+table, "ann"))
	})
}

// (3) COMMIT of an aborted transaction answers ROLLBACK and undoes the
// SET; so does an error in an implicit transaction (a multi-statement
// Query, a batch up to Sync).
func TestSearchPath_AbortedTransactionsUndoTheirSets(t *testing.T) {
	db := loadTestDB(t)
	searchPathModes(t, func(t *testing.T, table, mode string) {
		c := searchPathTables(t, db, table)
		conn := connect(t, db.URL(c.Addr, mode))
		ctx := ctxT(t)
		insert := "INSERT INTO " + table + " (id, user_id) VALUES ($1, $2)"
		_, err := conn.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SET search_path TO "+spSchema)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT 1/0")
		require.Error(t, err)
		tag, err := conn.Exec(ctx, "COMMIT")
		require.NoError(t, err)
		require.Equal(t, "ROLLBACK", tag.String(), "COMMIT of an aborted transaction")
		_, err = conn.Exec(ctx, insert, "p1", "ann")
		require.NoError(t, err)

		// An error in an implicit transaction: a multi-statement Query
		// (simple protocol) or a batch up to its Sync (extended).
		b := &pgx.Batch{}
		b.Queue("SET search_path TO " + spSchema)
		b.Queue(insert, "o1", "ann")
		b.Queue("SELECT 1/0")
		require.Error(t, conn.SendBatch(ctx, b).Close())
		_, err = conn.Exec(ctx, insert, "p2", "ann")
		require.NoError(t, err)

		assert.Equal(t, []string{"public:p1", "public:p2"}, rowsBySchema(t, db, table), "where the server put the rows")
		assert.Equal(t, []string{"p1:confirmed", "p2:confirmed"}, c.states(t, "public."+table, "ann"))
	})
}

// (4) Pipelined: statements analysed before the server has answered the
// ones before them.
func TestSearchPath_PipelinedStatements(t *testing.T) {
	db := loadTestDB(t)
	t.Run("pgx batch: BEGIN, SET, INSERT, ROLLBACK, INSERT up to one Sync", func(t *testing.T) {
		c := searchPathTables(t, db, "sp_batch")
		conn := connect(t, db.URL(c.Addr, ""))
		insert := "INSERT INTO sp_batch (id, user_id) VALUES ($1, $2)"
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue("SET search_path TO " + spSchema)
		b.Queue(insert, "o1", "ann")
		b.Queue("ROLLBACK")
		b.Queue(insert, "p1", "ann")
		b.Queue("SET search_path TO " + spSchema)
		b.Queue(insert, "o2", "ann")
		require.NoError(t, conn.SendBatch(ctxT(t), b).Close())
		assert.Equal(t, []string{"lethe_sp:o2", "public:p1"}, rowsBySchema(t, db, "sp_batch"), "where the server put the rows")
		assert.Equal(t, []string{"p1:confirmed"}, c.states(t, "public.sp_batch", "ann"))
	})
	t.Run("pipeline across Syncs: COMMIT of an aborted block, then INSERT, sent at once", func(t *testing.T) {
		c := searchPathTables(t, db, "sp_pipe")
		conn := connect(t, db.URL(c.Addr, ""))
		ctx := ctxT(t)
		p := conn.PgConn().StartPipeline(ctx)
		send := func(sql string, args ...string) {
			params := make([][]byte, len(args))
			for i, a := range args {
				params[i] = []byte(a)
			}
			p.SendQueryParams(sql, params, nil, nil, nil)
		}
		send("BEGIN")
		send("SET search_path TO " + spSchema)
		send("SELECT 1/0")
		p.SendPipelineSync()
		send("COMMIT") // answers ROLLBACK: the SET is undone
		p.SendPipelineSync()
		// Analysed before the COMMIT's answer: capture must tag public.
		send("INSERT INTO sp_pipe (id, user_id) VALUES ($1, $2)", "p1", "ann")
		p.SendPipelineSync()
		require.NoError(t, p.Flush())
		var got []string // what the server answered, in order
		for syncs := 0; syncs < 3; {
			res, err := p.GetResults()
			if err != nil {
				got = append(got, "error")
				continue
			}
			require.NotNil(t, res, "answers missing after %v", got)
			switch r := res.(type) {
			case *pgconn.ResultReader:
				ct, err := r.Close()
				if err != nil {
					got = append(got, "error")
				} else {
					got = append(got, ct.String())
				}
			case *pgconn.PipelineSync:
				got = append(got, "Sync")
				syncs++
			}
		}
		require.NoError(t, p.Close())
		assert.Equal(t, []string{"BEGIN", "SET", "error", "Sync", "ROLLBACK", "Sync", "INSERT 0 1", "Sync"}, got)
		assert.Equal(t, []string{"public:p1"}, rowsBySchema(t, db, "sp_pipe"), "where the server put the rows")
		assert.Equal(t, []string{"p1:confirmed"}, c.states(t, "public.sp_pipe", "ann"))
	})
}
