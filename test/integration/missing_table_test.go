//go:build integration

package integration

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestConnector_MissingTableHoldsNothing: the store answers for a
// configured table that does not exist instead of failing: recovery finds
// none of its records, Absent says so, and MatchFor's error is connector.ErrAbsent.
func TestConnector_MissingTableHoldsNothing(t *testing.T) {
	db := loadTestDB(t)
	extDropTables(t, db, "public.missing_conn_t")
	ctx := ctxT(t)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	missing := pgstore.Table{Schema: "public", Name: "missing_conn_t", ID: "id", Subjects: []pgstore.Subject{{Column: "user_id"}}}

	found, err := store.Existing(ctx, "public.missing_conn_t", "id", []string{"a", "b"})
	require.NoError(t, err, "recovery of intents for a table that does not exist drops them")
	assert.Empty(t, found)
	found, err = store.Existing(ctx, "nosuchschema_conn.t", "id", []string{"a"})
	require.NoError(t, err, "nor does its schema")
	assert.Empty(t, found)

	absent, err := store.Absent(ctx, missing)
	require.NoError(t, err)
	assert.True(t, absent)
	_, err = store.MatchFor(ctx, missing)
	require.ErrorIs(t, err, connector.ErrAbsent)

	extExec(t, db, "CREATE TABLE public.missing_conn_t (id text PRIMARY KEY, user_id text)", "INSERT INTO public.missing_conn_t VALUES ('a', 'x')")
	absent, err = store.Absent(ctx, missing)
	require.NoError(t, err)
	assert.False(t, absent)
	found, err = store.Existing(ctx, "public.missing_conn_t", "id", []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true}, found)
}

// TestCapture_TableCreatedAfterStartIsCaptured: rules name tables that do
// not exist when the proxy starts. One is created through the proxy (as
// LangChain.js's PGVectorStore does on first use), the other directly on
// the server; writes to both through the proxy are then tagged, and an
// unattributable write to them is refused.
func TestCapture_TableCreatedAfterStartIsCaptured(t *testing.T) {
	db := loadTestDB(t)
	extDropTables(t, db, "public.late_via_proxy", "public.late_direct")
	uid, _ := extract.ParseSubject("user_id")
	c := startDatabaseCapture(t, db, db.DB, []extract.Rule{
		{Table: "public.late_via_proxy", ID: "id", Subjects: []extract.Subject{uid}},
		{Table: "public.late_direct", ID: "id", Subjects: []extract.Subject{uid}},
	})
	ctx := ctxT(t)
	conn := connect(t, db.URL(c.Addr, ""))

	// Before the table exists the server refuses the write; nothing stays pending.
	_, err := conn.Exec(ctx, "INSERT INTO late_via_proxy (id, user_id) VALUES ($1, $2)", "early", "late-alice")
	require.Equal(t, "42P01", pgCode(err), "err: %v", err)

	_, err = conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS late_via_proxy (id text PRIMARY KEY, user_id text, embedding vector(3))", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err, "DDL creating a configured table passes")
	_, err = conn.Exec(ctx, "INSERT INTO late_via_proxy (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')", "p1", "late-alice")
	require.NoError(t, err)
	require.Equal(t, []string{"p1"}, c.confirmed(t, "public.late_via_proxy", "late-alice"))

	extExec(t, db, "CREATE TABLE public.late_direct (id text PRIMARY KEY, user_id text)")
	_, err = conn.Exec(ctx, "INSERT INTO late_direct (id, user_id) VALUES ('d1', 'late-alice'), ('d2', 'late-bob')", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.Equal(t, []string{"d1"}, c.confirmed(t, "public.late_direct", "late-alice"))
	require.Equal(t, []string{"d2"}, c.confirmed(t, "public.late_direct", "late-bob"))

	_, err = conn.Exec(ctx, "INSERT INTO late_direct (id, user_id) SELECT id || 'x', user_id FROM late_via_proxy")
	require.Equal(t, capture.CodeUnattributed, pgCode(err), "err: %v", err)
}

// certLayer is one layer of a certificate as the CLI prints it.
func certLayer(t *testing.T, p certificate.Payload, table string) certificate.Layer {
	t.Helper()
	for _, l := range p.Layers {
		if l.Table == table {
			return l
		}
	}
	t.Fatalf("the certificate has no layer %s", table)
	return certificate.Layer{}
}

// forgetViaCLI previews and confirms a forget of subject with the CLI
// (confirmArgs added to confirm: --nothing-found), waits for it to
// complete, and returns the preview's counts per table and the payload of
// its certificate, which must verify.
func (f *forgetBinary) forgetViaCLI(t *testing.T, subject string, confirmArgs ...string) (map[string]map[string]float64, certificate.Payload) {
	t.Helper()
	out, err := f.cli(t, subject+"\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Layers []struct {
			Table         string `json:"table"`
			LedgerRecords int    `json:"ledger_records"`
			Rows          int    `json:"rows"`
		} `json:"layers"`
		Token string `json:"confirm_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
	preview := map[string]map[string]float64{}
	for _, l := range pv.Layers {
		preview[l.Table] = map[string]float64{"ledger_records": float64(l.LedgerRecords), "rows": float64(l.Rows)}
	}
	out, err = f.cli(t, subject+"\n", append([]string{"forget", "confirm", "--token", pv.Token}, confirmArgs...)...)
	require.NoError(t, err)
	return preview, f.certified(t, out)
}

// TestForget_TableCreatedOnFirstUse: lethe-proxy starts with rules for
// tables that do not exist yet, warning about them. A forget then succeeds
// and its certificate says each table did not exist. LangChain.js's
// PGVectorStore creates its table through the proxy on first use and
// writes; another table is created directly on the server and written
// through the proxy; both are tagged, and the next forget deletes and
// verifies there as usual.
func TestForget_TableCreatedOnFirstUse(t *testing.T) {
	db := loadTestDB(t)
	shapeCheckTools(t)
	extExec(t, db, "CREATE EXTENSION IF NOT EXISTS vector")
	const lcjs, direct = "public." + shapePrefix + "_lcjs_ids", "public.lethe_late_direct"
	extDropTables(t, db, lcjs, direct)
	f := newForgetBinary(t, db, `    - {table: `+lcjs+`, id: id, subjects: ["metadata->>'user_id'"], vacuum: true}
    - {table: `+direct+`, id: id, subjects: [user_id]}`)
	f.start(t)
	logs := mustRead(t, f.cfg+".log")
	for _, table := range []string{lcjs, direct} {
		assert.Regexp(t, `level=WARN msg="a configured table does not exist yet[^"]*" table=`+table, logs)
	}

	pv, p := f.forgetViaCLI(t, "carol@example.com", "--nothing-found")
	assert.Contains(t, p.Claim.Statement, "No records of the data subject identified by this certificate were found")
	for _, table := range []string{lcjs, direct} {
		assert.Equal(t, map[string]float64{"ledger_records": 0, "rows": 0}, pv[table])
		l := certLayer(t, p, table)
		assert.Zero(t, l.Deleted)
		assert.Zero(t, l.Residual)
		assert.True(t, l.VerifiedAbsent)
		assert.Contains(t, l.VerifyMethod, "the table did not exist when forget verified absence")
		schema, name, _ := extract.SplitTable(table)
		assert.Equal(t, []string{`SELECT to_regclass('"` + schema + `"."` + name + `"') IS NULL`}, l.VerifyQueries)
	}
	assert.Len(t, p.Scope, 2, "both tables are in the scope")

	// LangChain.js creates its table (CREATE TABLE IF NOT EXISTS) and writes, through the proxy.
	shapeNode("ids")(t, db, f.proxyAddr)
	// The other table appears on the server, bypassing the proxy.
	extExec(t, db, "CREATE TABLE "+direct+" (id text PRIMARY KEY, user_id text)")
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err := app.Exec(ctxT(t), "INSERT INTO lethe_late_direct (id, user_id) VALUES ($1, $2), ($3, $4)",
		"d1", "alice@example.com", "d2", "bob@example.com")
	require.NoError(t, err)

	pv, p = f.forgetViaCLI(t, "alice@example.com")
	assert.Equal(t, map[string]float64{"ledger_records": 3, "rows": 3}, pv[lcjs], "LangChain.js's writes were tagged")
	assert.Equal(t, map[string]float64{"ledger_records": 1, "rows": 1}, pv[direct], "the write to the table created directly was tagged")
	for table, deleted := range map[string]int64{lcjs: 3, direct: 1} {
		l := certLayer(t, p, table)
		assert.Equal(t, deleted, l.Deleted, table)
		assert.Zero(t, l.Residual)
		assert.Contains(t, l.VerifyMethod, "re-query after commit")
		require.Len(t, l.VerifyQueries, 2)
		assert.Contains(t, l.VerifyQueries[0], "SELECT count(*) FROM ")
	}
	var alice, bob int
	conn := connect(t, db.URL(db.Addr(), ""))
	require.NoError(t, conn.QueryRow(ctxT(t), `SELECT (SELECT count(*) FROM `+lcjs+` WHERE metadata->>'user_id' = $1)
		+ (SELECT count(*) FROM `+direct+` WHERE user_id = $1)`, "alice@example.com").Scan(&alice))
	require.NoError(t, conn.QueryRow(ctxT(t), `SELECT (SELECT count(*) FROM `+lcjs+` WHERE metadata->>'user_id' = $1)
		+ (SELECT count(*) FROM `+direct+` WHERE user_id = $1)`, "bob@example.com").Scan(&bob))
	assert.Equal(t, [2]int{0, 4}, [2]int{alice, bob}, "alice's rows are gone, bob's stay")
	assert.NotContains(t, mustRead(t, f.cfg+".log"), "alice@", "the subject never reaches the logs")
}

// TestForget_TableDroppedAfterStartHoldsNothing: a configured table that
// existed when forget was set up is dropped; a forget then finds nothing
// there and says the table did not exist (rather than failing). When the
// table is created again, with its columns in another order, forget reads
// them anew and deletes there as usual.
func TestForget_TableDroppedAfterStartHoldsNothing(t *testing.T) {
	db := loadTestDB(t)
	schema, rules, tables := forgetTables(t, db)
	rig := startForgetRig(t, db, rules, tables, sqliteLedger)
	writeForgetData(t, db.URL(rig.proxy.Addr, "sslmode=disable"), schema)
	rig.settle(t)
	ctx := ctxT(t)
	extExec(t, db, "DROP TABLE "+schema+".memories")

	forget := func(t *testing.T) certificate.Payload {
		t.Helper()
		pv, err := rig.engine.Preview(ctx, "alice")
		require.NoError(t, err)
		receipt, err := rig.engine.Forget(ctx, "alice", pv.Token)
		require.NoError(t, err)
		st := rig.waitDone(t, receipt.RequestID)
		require.Equal(t, "completed", string(st.Status), "error: %s", st.Error)
		cert, err := rig.engine.Certificate(ctx, receipt.RequestID)
		require.NoError(t, err)
		res := certificate.Verify(cert, rig.keys, *rig.now)
		require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
		return *res.Payload
	}
	p := forget(t)
	chunks, memories := certLayer(t, p, schema+".chunks"), certLayer(t, p, schema+".memories")
	assert.EqualValues(t, 3, chunks.Deleted)
	assert.Contains(t, chunks.VerifyMethod, "re-query after commit")
	assert.Zero(t, memories.Deleted)
	assert.True(t, memories.VerifiedAbsent)
	assert.Contains(t, memories.VerifyMethod, "the table did not exist")
	assert.Equal(t, []string{`SELECT to_regclass('"` + schema + `"."memories"') IS NULL`}, memories.VerifyQueries)

	// Created again behind the proxy's back, columns in another order, with a row about alice.
	extExec(t, db, "CREATE TABLE "+schema+".memories (extra json, user_id text, id bigserial PRIMARY KEY, embedding vector(3))",
		"INSERT INTO "+schema+".memories (user_id, extra) VALUES ('alice', '{}'), (NULL, '{\"participants\": [\"alice\"]}'), ('bob', '{}')")
	p = forget(t)
	memories = certLayer(t, p, schema+".memories")
	assert.EqualValues(t, 2, memories.Deleted)
	assert.Contains(t, memories.VerifyMethod, "re-query after commit")
	_, m := subjectRows(t, db, schema, "alice")
	assert.Zero(t, m)
	_, m = subjectRows(t, db, schema, "bob")
	assert.Equal(t, 1, m)
}
