//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// wSchema holds the server-side writers of these tests; its configured
// table has a name no other test uses, since unqualified names in function
// bodies match a configured table in any schema.
const wSchema = "lethe_writers"

// writersSchema creates lethe_writers with a configured table wdocs and
// every kind of server-side code: functions and a procedure that write
// it, a trigger and a rule that do, read-only search functions in the
// shape of Supabase's match_documents, and a trigger that only fills in
// NEW.
func writersSchema(t *testing.T, db testDB) []extract.Rule {
	t.Helper()
	drop := "DROP SCHEMA IF EXISTS " + wSchema + " CASCADE"
	extExec(t, db, drop, "CREATE SCHEMA "+wSchema, `SET search_path TO `+wSchema+`;
		CREATE TABLE wdocs (id text PRIMARY KEY, user_id text, embedding float8[]);
		CREATE TABLE wmessages (id text PRIMARY KEY, author text);
		CREATE TABLE wstaging (id text, user_id text);

		CREATE FUNCTION add_doc(p_id text, p_user text) RETURNS void LANGUAGE sql
		AS $$ INSERT INTO lethe_writers.wdocs (id, user_id) VALUES (p_id, p_user) $$;

		CREATE FUNCTION add_doc_atomic(p_id text, p_user text) RETURNS void LANGUAGE sql
		BEGIN ATOMIC INSERT INTO lethe_writers.wdocs (id, user_id) VALUES (p_id, p_user); END;

		CREATE PROCEDURE proc_add(p_id text, p_user text) LANGUAGE plpgsql
		AS $$ BEGIN PERFORM lethe_writers.add_doc(p_id, p_user); END $$;

		CREATE FUNCTION dyn_write(p_id text) RETURNS void LANGUAGE plpgsql
		AS $$ BEGIN EXECUTE format('DELETE FROM %I.%I WHERE id = $1', 'lethe_writers', 'wdocs') USING p_id; END $$;

		CREATE FUNCTION embed_message() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN INSERT INTO lethe_writers.wdocs (id, user_id) VALUES (NEW.id, NEW.author); RETURN NEW; END $$;
		CREATE TRIGGER embed AFTER INSERT ON wmessages FOR EACH ROW EXECUTE FUNCTION embed_message();

		CREATE FUNCTION lower_user() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN NEW.user_id := lower(NEW.user_id); RETURN NEW; END $$;
		CREATE TRIGGER lower_user BEFORE INSERT OR UPDATE ON wdocs FOR EACH ROW EXECUTE FUNCTION lower_user();

		CREATE RULE push AS ON INSERT TO wstaging DO ALSO
		  INSERT INTO lethe_writers.wdocs (id, user_id) VALUES (new.id, new.user_id);

		CREATE FUNCTION match_documents(query_user text, match_count int)
		RETURNS TABLE (id text, similarity float8) LANGUAGE plpgsql AS $$
		#variable_conflict use_column
		BEGIN
		  RETURN QUERY SELECT wdocs.id, 1.0::float8 FROM lethe_writers.wdocs WHERE user_id = query_user LIMIT match_count;
		END $$;

		CREATE FUNCTION match_documents_sql(query_user text, match_count int)
		RETURNS SETOF lethe_writers.wdocs LANGUAGE sql STABLE AS $$
		  SELECT * FROM lethe_writers.wdocs WHERE user_id = query_user LIMIT least(match_count, 200)
		$$;`)
	t.Cleanup(func() { extExec(t, db, drop) })
	return []extract.Rule{{Table: wSchema + ".wdocs", ID: "id", Subjects: []extract.Subject{{Column: "user_id"}}}}
}

// ours keeps the writers in wSchema: the test database holds other tests'.
func ours(w extract.Writers) extract.Writers {
	var out extract.Writers
	for _, f := range w.Functions {
		if f.Schema == wSchema {
			out.Functions = append(out.Functions, f)
		}
	}
	for _, f := range w.Fired {
		if f.Schema == wSchema {
			out.Fired = append(out.Fired, f)
		}
	}
	return out
}

// writersProxy starts a capturing proxy over wSchema's table and loads
// the server-side writers into it as lethe-proxy does with capture.store.
func writersProxy(t *testing.T, db testDB, mode capture.Mode, rules []extract.Rule) (*captured, *pgcapture.WriterCatalog) {
	t.Helper()
	c := startCaptureProxy(t, db, mode, rules)
	store, err := pgstore.Open(ctxT(t), db.URL(db.Addr(), ""))
	require.NoError(t, err)
	t.Cleanup(store.Close)
	finder := c.capture.Rules().WriterFinder()
	wc := pgcapture.NewWriterCatalog(c.capture, func(ctx context.Context) (extract.Writers, error) { return store.Writers(ctx, finder) })
	require.NoError(t, wc.Refresh(ctxT(t)))
	return c, wc
}

func TestWriters_LoaderFindsFunctionsTriggersAndRules(t *testing.T) {
	db := loadTestDB(t)
	rules := writersSchema(t, db)
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	store, err := pgstore.Open(ctxT(t), db.URL(db.Addr(), ""))
	require.NoError(t, err)
	defer store.Close()

	w, err := store.Writers(ctxT(t), compiled.WriterFinder())
	require.NoError(t, err)
	wdocs := []string{wSchema + ".wdocs"}
	assert.Equal(t, extract.Writers{
		Functions: []extract.WriterFunction{
			{Schema: wSchema, Name: "add_doc", Tables: wdocs},
			{Schema: wSchema, Name: "add_doc_atomic", Tables: wdocs},
			{Schema: wSchema, Name: "dyn_write", Tables: wdocs},
			{Schema: wSchema, Name: "embed_message", Tables: wdocs},
			{Schema: wSchema, Name: "proc_add", Tables: wdocs},
		},
		Fired: []extract.FiredRelation{
			{Schema: wSchema, Name: "wmessages", By: "trigger embed", Events: extract.OnInsert, Tables: wdocs},
			{Schema: wSchema, Name: "wstaging", By: "rule push", Events: extract.OnInsert, Tables: wdocs},
		},
	}, ours(w), "match_documents, match_documents_sql and lower_user only read or fill in NEW")
}

func TestWriters_StrictRefusesWritesMadeInsideTheServer(t *testing.T) {
	db := loadTestDB(t)
	c, _ := writersProxy(t, db, capture.Strict, writersSchema(t, db))
	for _, connMode := range []string{"", "default_query_exec_mode=simple_protocol"} {
		conn := connect(t, db.URL(c.Addr, connMode))
		for _, sql := range []string{
			"SELECT lethe_writers.add_doc('d1', 'ann')",
			"SELECT add_doc('d1', 'ann')", // unqualified: whatever schema it resolves to
			"SELECT lethe_writers.add_doc_atomic('d1', 'ann')",
			"CALL lethe_writers.proc_add('d1', 'ann')",
			"SELECT lethe_writers.dyn_write('d1')",
			"INSERT INTO lethe_writers.wmessages (id, author) VALUES ('d1', 'ann')",
			"INSERT INTO lethe_writers.wstaging (id, user_id) VALUES ('d1', 'ann')",
			"DO $$ BEGIN INSERT INTO lethe_writers.wdocs (id, user_id) VALUES ('d1', 'ann'); END $$",
		} {
			_, err := conn.Exec(ctxT(t), sql)
			require.Error(t, err, "%s (%s)", sql, connMode)
			assert.Equal(t, capture.CodeUnattributed, pgCode(err), sql)
			assert.Contains(t, pgMessage(err), "cannot be attributed", sql)
		}
		_, err := conn.Exec(ctxT(t), "SELECT lethe_writers.add_doc($1, $2)", "d1", "ann")
		assert.Equal(t, capture.CodeUnattributed, pgCode(err))
	}
	assert.Equal(t, 0, countRows(t, db, wSchema+".wdocs"), "nothing was written")
	assert.Equal(t, 0, countRows(t, db, wSchema+".wmessages"))

	// Reads through search functions, and ordinary attributed writes to a
	// table whose trigger only fills in NEW, pass.
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctxT(t), "INSERT INTO lethe_writers.wdocs (id, user_id) VALUES ($1, $2)", "ok1", "Ann")
	require.NoError(t, err)
	c.wal.expectDisagreements(1, "the trigger lower_user stores 'ann': the proxy's tag is of the value sent; the follower's of the value stored")
	var n int
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT count(*) FROM lethe_writers.match_documents($1, 5)", "ann").Scan(&n))
	assert.Equal(t, 1, n)
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT count(*) FROM lethe_writers.match_documents_sql('ann', 5)").Scan(&n))
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"ok1"}, c.confirmed(t, wSchema+".wdocs", "Ann"))
	assert.Equal(t, []string{"ok1"}, c.confirmed(t, wSchema+".wdocs", "ann"), "the WAL follower tags the value stored")
}

func TestWriters_PermissiveRecordsAnUnattributedWrite(t *testing.T) {
	db := loadTestDB(t)
	c, _ := writersProxy(t, db, capture.Permissive, writersSchema(t, db))
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctxT(t), "SELECT lethe_writers.add_doc($1, $2)", "p1", "ann")
	require.NoError(t, err)
	_, err = conn.Exec(ctxT(t), "INSERT INTO lethe_writers.wmessages (id, author) VALUES ('p2', 'bob')")
	require.NoError(t, err)
	assert.Equal(t, 2, countRows(t, db, wSchema+".wdocs"))
	assert.Equal(t, int64(2), c.capture.Stats.Intents.Load(), "one intent per statement")
	// The ledger keeps one unattributed record per table, whatever the
	// number of such writes; the WAL follower adds the two rows as stored.
	var confirmed int64
	for range 250 {
		counts, err := c.ledger.Counts(context.Background())
		require.NoError(t, err)
		for _, tc := range counts {
			if tc.Table == wSchema+".wdocs" && tc.State == ledger.StateConfirmed {
				confirmed = tc.Count
			}
		}
		if confirmed >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, int64(3), confirmed, "an unattributed write of wdocs, confirmed, and the rows p1 and p2 from the WAL")
	unattributed, err := c.ledger.BySubject(context.Background(), ledger.SubjectHash{})
	require.NoError(t, err)
	require.Len(t, unattributed, 1)
	assert.True(t, unattributed[0].Unattributed)
	assert.Equal(t, []string{"p1"}, c.confirmed(t, wSchema+".wdocs", "ann"))
}

// A connection that prepared a call before the catalog knew the function
// writes (it was created since the last refresh) is refused after the
// next refresh, although pgx does not prepare the statement again.
func TestWriters_RefreshAppliesToStatementsAlreadyPrepared(t *testing.T) {
	db := loadTestDB(t)
	c, wc := writersProxy(t, db, capture.Strict, writersSchema(t, db))
	extExec(t, db, `CREATE FUNCTION lethe_writers.late_add(p_id text, p_user text) RETURNS void LANGUAGE sql
		AS $$ INSERT INTO lethe_writers.wdocs (id, user_id) VALUES (p_id, p_user) $$`)
	conn := connect(t, db.URL(c.Addr, "")) // pgx caches prepared statements by default
	_, err := conn.Exec(ctxT(t), "SELECT lethe_writers.late_add($1, $2)", "l1", "ann")
	require.NoError(t, err, "not known yet: the gap until the next refresh")

	require.NoError(t, wc.Refresh(ctxT(t)))
	_, err = conn.Exec(ctxT(t), "SELECT lethe_writers.late_add($1, $2)", "l2", "ann")
	assert.Equal(t, capture.CodeUnattributed, pgCode(err))
	assert.Equal(t, 1, countRows(t, db, wSchema+".wdocs"))
}
