//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// cSchema holds the configured tables of the catalog tests and the
// relations that write them under other names. Its table names are used
// by no other test: unqualified names in function bodies match a
// configured table in any schema.
const cSchema = "lethe_cat"

// catalogSchema creates lethe_cat with two configured tables, cnotes
// (with an inheritance child and views over it, one over another, one
// WITH CHECK OPTION) and pnotes (partitioned by region, with a
// sub-partitioned partition), and a schema lethe_cat_other with an
// unconfigured cnotes.
func catalogSchema(t *testing.T, db testDB) []extract.Rule {
	t.Helper()
	drop := "DROP SCHEMA IF EXISTS " + cSchema + ", lethe_cat_other CASCADE"
	extExec(t, db, drop, "CREATE SCHEMA "+cSchema, "CREATE SCHEMA lethe_cat_other", `SET search_path TO `+cSchema+`;
		CREATE TABLE cnotes (id text PRIMARY KEY, subject text, body text);
		CREATE TABLE cnotes_child (extra int) INHERITS (cnotes);
		CREATE VIEW cnotes_v AS SELECT id, subject AS who, body FROM cnotes;
		CREATE VIEW cnotes_vv AS SELECT id AS key, who FROM cnotes_v WITH CHECK OPTION;
		CREATE VIEW cnotes_mine AS SELECT id, subject FROM cnotes WHERE subject IS NOT NULL WITH CASCADED CHECK OPTION;
		CREATE TABLE pnotes (id text, subject text, region text) PARTITION BY LIST (region);
		CREATE TABLE pnotes_eu PARTITION OF pnotes FOR VALUES IN ('eu');
		CREATE TABLE pnotes_us PARTITION OF pnotes FOR VALUES IN ('us', 'ca') PARTITION BY LIST (region);
		CREATE TABLE pnotes_ca PARTITION OF pnotes_us FOR VALUES IN ('ca');
		CREATE TABLE lethe_cat_other.cnotes (id text PRIMARY KEY, subject text, body text);
		CREATE FUNCTION lethe_cat_other.enter(s text) RETURNS void LANGUAGE plpgsql
		AS $$ BEGIN PERFORM set_config('search_path', s, false); END $$;`)
	t.Cleanup(func() { extExec(t, db, drop) })
	return []extract.Rule{
		{Table: cSchema + ".cnotes", ID: "id", Subjects: []extract.Subject{{Column: "subject"}}},
		{Table: cSchema + ".pnotes", ID: "id", Subjects: []extract.Subject{{Column: "subject"}}},
	}
}

// catalogProxy starts a capturing proxy over lethe_cat's tables, reads
// the catalog into it as lethe-proxy does with capture.store, and keeps
// reading it (every minute, and after DDL through a session) until the
// test ends.
// seed runs on the server before the proxy starts.
func catalogProxy(t *testing.T, db testDB, mode capture.Mode, seed ...string) *captured {
	t.Helper()
	rules := catalogSchema(t, db)
	extExec(t, db, seed...)
	c := startCaptureProxy(t, db, mode, rules)
	store, err := pgstore.Open(ctxT(t), db.URL(db.Addr(), ""))
	require.NoError(t, err)
	t.Cleanup(store.Close)
	finder := c.capture.Rules().WriterFinder()
	wc := pgcapture.NewWriterCatalog(c.capture, func(ctx context.Context) (extract.Writers, error) { return store.Writers(ctx, finder) })
	require.NoError(t, wc.Refresh(ctxT(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); wc.Watch(ctx, time.Minute, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	c.observer.FollowCatalog(wc)
	return c
}

// assertLedgerHoldsStoredRows checks the invariant: every row the server
// stored in table (children and partitions included) is confirmed in the
// ledger for the subject it holds.
func assertLedgerHoldsStoredRows(t *testing.T, c *captured, db testDB, table string) {
	t.Helper()
	conn := connect(t, db.DSN(db.Addr(), ""))
	rows, err := conn.Query(ctxT(t), "SELECT id, subject FROM "+table+" ORDER BY id")
	require.NoError(t, err)
	stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, Subject string }])
	require.NoError(t, err)
	for _, r := range stored {
		assert.Contains(t, c.confirmed(t, table, r.Subject), r.ID, "row %s of %s, about %s, is in the ledger", r.ID, table, r.Subject)
	}
}

func TestCatalog_WritesThroughViewsPartitionsAndChildrenAreTagged(t *testing.T) {
	db := loadTestDB(t)
	// Rows the test updates through a view, written before the proxy
	// starts: a WAL follower beside the proxy then compares each update
	// with the proxy's tags alone, not with a racing insert of the same id.
	c := catalogProxy(t, db, capture.Strict, "INSERT INTO lethe_cat.cnotes (id, subject) VALUES ('eupd', 'uma'), ('supd', 'uma')")
	for _, connMode := range []string{"", "default_query_exec_mode=simple_protocol"} {
		conn := connect(t, db.URL(c.Addr, connMode))
		p := "e" // ids differ per protocol
		if connMode != "" {
			p = "s"
		}
		for _, w := range []struct{ sql, id, subject string }{
			{"INSERT INTO lethe_cat.cnotes_child (id, subject, extra) VALUES ($1, $2, 1)", "child", "carol"},
			{"INSERT INTO lethe_cat.cnotes_v (id, who) VALUES ($1, $2)", "view", "vic"},
			{"INSERT INTO lethe_cat.cnotes_vv (key, who) VALUES ($1, $2)", "viewview", "wes"},
			{"INSERT INTO lethe_cat.cnotes_mine (id, subject) VALUES ($1, $2)", "check", "cher"},
			{"INSERT INTO lethe_cat.pnotes_eu (id, subject, region) VALUES ($1, $2, 'eu')", "part", "pat"},
			{"INSERT INTO lethe_cat.pnotes_ca (id, subject, region) VALUES ($1, $2, 'ca')", "subpart", "cam"},
			{"INSERT INTO lethe_cat.pnotes_us (id, subject, region) VALUES ($1, $2, 'ca')", "midpart", "mia"},
		} {
			_, err := conn.Exec(ctxT(t), w.sql, p+w.id, p+w.subject)
			require.NoError(t, err, w.sql)
		}
		_, err := conn.Exec(ctxT(t), "UPDATE lethe_cat.cnotes_v SET who = $1 WHERE id = $2", p+"vera", p+"upd")
		require.NoError(t, err)
		n, err := conn.CopyFrom(ctxT(t), pgx.Identifier{cSchema, "pnotes_eu"}, []string{"id", "subject", "region"},
			pgx.CopyFromRows([][]any{{p + "copy1", p + "cody", "eu"}, {p + "copy2", p + "cora", "eu"}}))
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
	}
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.PgConn().CopyFrom(ctxT(t), strings.NewReader("tcopy\ttess\n"), "COPY lethe_cat.cnotes_child (id, subject) FROM STDIN")
	require.NoError(t, err)
	assert.Equal(t, []string{"tcopy"}, c.confirmed(t, cSchema+".cnotes", "tess"), "COPY text into a child")
	assertLedgerHoldsStoredRows(t, c, db, cSchema+".cnotes")
	assertLedgerHoldsStoredRows(t, c, db, cSchema+".pnotes")
	assert.Equal(t, []string{"echild"}, c.confirmed(t, cSchema+".cnotes", "ecarol"))
	assert.Equal(t, []string{"supd"}, c.confirmed(t, cSchema+".cnotes", "svera"), "the update through the view")
}

func TestCatalog_AttachAndInheritOfAFilledTableAreRefused(t *testing.T) {
	db := loadTestDB(t)
	c := catalogProxy(t, db, capture.Strict)
	extExec(t, db,
		"CREATE TABLE lethe_cat.filled (id text, subject text, region text)",
		"INSERT INTO lethe_cat.filled VALUES ('f1', 'fred', 'xx')",
		"CREATE TABLE lethe_cat.filled2 (id text PRIMARY KEY, subject text, body text)",
		"INSERT INTO lethe_cat.filled2 VALUES ('f2', 'fran', '')")
	conn := connect(t, db.URL(c.Addr, ""))
	for _, sql := range []string{
		"ALTER TABLE lethe_cat.pnotes ATTACH PARTITION lethe_cat.filled FOR VALUES IN ('xx')",
		"ALTER TABLE lethe_cat.pnotes_us ATTACH PARTITION lethe_cat.filled FOR VALUES IN ('us')",
		"ALTER TABLE lethe_cat.filled2 INHERIT lethe_cat.cnotes",
		"ALTER TABLE lethe_cat.pnotes DETACH PARTITION lethe_cat.pnotes_eu",
	} {
		_, err := conn.Exec(ctxT(t), sql)
		require.Error(t, err, sql)
		assert.Equal(t, capture.CodeUnattributed, pgCode(err), sql)
		assert.Contains(t, pgMessage(err), "insert the rows through the proxy", sql)
	}
	var n int
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT count(*) FROM pg_inherits WHERE inhrelid IN ('lethe_cat.filled'::regclass, 'lethe_cat.filled2'::regclass)").Scan(&n))
	assert.Zero(t, n, "nothing attached")
	assert.Equal(t, 0, countRows(t, db, cSchema+".cnotes"))
	assert.Equal(t, 0, countRows(t, db, cSchema+".pnotes"))
}

// A session whose search_path changes in a way the proxy cannot follow
// writes to configured tables through unqualified names: every such write
// is tagged for the configured table it may have reached.
func TestCatalog_SearchPathChangesTheProxyCannotFollow(t *testing.T) {
	db := loadTestDB(t)
	c := catalogProxy(t, db, capture.Strict)
	extExec(t, db, "DROP ROLE IF EXISTS lethe_cat",
		"CREATE ROLE lethe_cat", "GRANT lethe_cat TO CURRENT_USER",
		"GRANT USAGE ON SCHEMA lethe_cat, lethe_cat_other TO lethe_cat",
		"GRANT INSERT, SELECT ON lethe_cat.cnotes, lethe_cat_other.cnotes TO lethe_cat",
		"GRANT EXECUTE ON FUNCTION lethe_cat_other.enter(text) TO lethe_cat")
	t.Cleanup(func() { extExec(t, db, "DROP OWNED BY lethe_cat", "DROP ROLE IF EXISTS lethe_cat") })
	changes := []struct{ name, sql string }{
		{"SET SCHEMA", "SET SCHEMA 'lethe_cat'"},
		{"UPDATE pg_settings", "UPDATE pg_settings SET setting = 'lethe_cat' WHERE name = 'search_path'"},
		{"set_config in a CTE", "WITH s AS (SELECT set_config('search_path', 'lethe_cat', false)) SELECT * FROM s"},
		{"set_config in VALUES", "VALUES (set_config('search_path', 'lethe_cat', false))"},
		{"escaped name", `SELECT set_config(E'search\_path', 'lethe_cat', false)`},
		{"SET ROLE with $user", `SET search_path = "$user", lethe_cat_other; SET ROLE lethe_cat`},
		{"a function calling set_config", "SELECT lethe_cat_other.enter('lethe_cat')"},
	}
	for i, ch := range changes {
		t.Run(ch.name, func(t *testing.T) {
			conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol"))
			_, err := conn.Exec(ctxT(t), "SET search_path = lethe_cat_other")
			require.NoError(t, err)
			_, err = conn.Exec(ctxT(t), ch.sql)
			require.NoError(t, err)
			var where string
			require.NoError(t, conn.QueryRow(ctxT(t), "SELECT current_schemas(false)::text").Scan(&where))
			require.Regexp(t, `^\{lethe_cat[,}]`, where, "the server's path changed")
			id, who := fmt.Sprintf("sp%d", i), fmt.Sprintf("sam%d", i)
			_, err = conn.Exec(ctxT(t), "INSERT INTO cnotes (id, subject) VALUES ('"+id+"', '"+who+"')")
			require.NoError(t, err)
			assert.Equal(t, []string{id}, c.confirmed(t, cSchema+".cnotes", who))
		})
	}
	assertLedgerHoldsStoredRows(t, c, db, cSchema+".cnotes")
}

// DDL through the proxy is read from the catalog before the session's
// next statement: renames, new children, new writer functions.
func TestCatalog_DDLInTheSessionIsFollowed(t *testing.T) {
	db := loadTestDB(t)
	c := catalogProxy(t, db, capture.Strict)
	conn := connect(t, db.URL(c.Addr, ""))
	exec := func(sql string, args ...any) error {
		_, err := conn.Exec(ctxT(t), sql, args...)
		return err
	}
	refused := func(err error, contains string) {
		t.Helper()
		require.Error(t, err)
		assert.Equal(t, capture.CodeUnattributed, pgCode(err))
		assert.Contains(t, pgMessage(err), contains)
	}

	// A renamed child and a child created now are known at once.
	require.NoError(t, exec("ALTER TABLE lethe_cat.cnotes_child RENAME TO cnotes_kid"))
	require.NoError(t, exec("INSERT INTO lethe_cat.cnotes_kid (id, subject) VALUES ($1, $2)", "k1", "kim"))
	require.NoError(t, exec("CREATE TABLE lethe_cat.cnotes_new () INHERITS (lethe_cat.cnotes)"))
	require.NoError(t, exec("INSERT INTO lethe_cat.cnotes_new (id, subject) VALUES ($1, $2)", "n1", "nia"))
	require.NoError(t, exec("CREATE TEMP VIEW tv AS SELECT id, subject FROM lethe_cat.cnotes"))
	require.NoError(t, exec("INSERT INTO tv (id, subject) VALUES ($1, $2)", "t1", "tia"))

	// A renamed configured table or subject column is refused until the
	// configuration names it.
	require.NoError(t, exec("ALTER TABLE lethe_cat.cnotes RENAME COLUMN subject TO author"))
	refused(exec("INSERT INTO lethe_cat.cnotes (id, author) VALUES ($1, $2)", "r1", "rob"), "has no column subject")
	require.NoError(t, exec("ALTER TABLE lethe_cat.cnotes RENAME COLUMN author TO subject"))
	require.NoError(t, exec("ALTER TABLE lethe_cat.pnotes RENAME TO pnotes_old"))
	refused(exec("INSERT INTO lethe_cat.pnotes_old (id, subject, region) VALUES ($1, $2, 'eu')", "r2", "rob"), "under a new name")
	refused(exec("INSERT INTO lethe_cat.pnotes_eu (id, subject, region) VALUES ($1, $2, 'eu')", "r3", "rob"), "under a new name")
	require.NoError(t, exec("ALTER TABLE lethe_cat.pnotes_old RENAME TO pnotes"))

	// A function created now is a writer at once.
	require.NoError(t, exec(`CREATE FUNCTION lethe_cat.add_note(p_id text, p_who text) RETURNS void LANGUAGE sql
		AS $$ INSERT INTO lethe_cat.cnotes (id, subject) VALUES (p_id, p_who) $$`))
	refused(exec("SELECT lethe_cat.add_note($1, $2)", "f1", "fay"), "cannot be attributed")

	// In the DDL's own transaction the catalog cannot know yet: writes
	// after it are refused until it commits.
	tx, err := conn.Begin(ctxT(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), "CREATE TABLE lethe_cat.cnotes_tx () INHERITS (lethe_cat.cnotes)")
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), "INSERT INTO lethe_cat.cnotes_tx (id, subject) VALUES ($1, $2)", "x1", "xia")
	refused(err, "commit the DDL, then write")
	require.NoError(t, tx.Rollback(ctxT(t)))
	simple := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol"))
	_, err = simple.Exec(ctxT(t), "ALTER VIEW lethe_cat.cnotes_v RENAME TO cnotes_v2; INSERT INTO lethe_cat.cnotes_v2 (id, who) VALUES ('x2', 'xena')")
	refused(err, "commit the DDL, then write")
	require.NoError(t, exec("INSERT INTO lethe_cat.cnotes_v (id, who) VALUES ($1, $2)", "v1", "val"), "the refused text did not run")

	assert.Equal(t, 0, countRows(t, db, cSchema+".pnotes"))
	assertLedgerHoldsStoredRows(t, c, db, cSchema+".cnotes")
	assert.Equal(t, []string{"k1"}, c.confirmed(t, cSchema+".cnotes", "kim"))
	assert.Equal(t, []string{"t1"}, c.confirmed(t, cSchema+".cnotes", "tia"))
}
