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
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// oSchema holds the tables of the column-order tests.
const oSchema = "lethe_order"

// orderSchema creates lethe_order.onotes, whose id and subject columns
// are neither first nor next to each other, and a view over it that lists
// them the other way round.
func orderSchema(t *testing.T, db testDB) []extract.Rule {
	t.Helper()
	drop := "DROP SCHEMA IF EXISTS " + oSchema + " CASCADE"
	extExec(t, db, drop, "CREATE SCHEMA "+oSchema,
		"CREATE TABLE "+oSchema+".onotes (body text, id text PRIMARY KEY, subject text, n int DEFAULT 0, note text)",
		"CREATE VIEW "+oSchema+".onotes_v AS SELECT subject AS who, id FROM "+oSchema+".onotes")
	t.Cleanup(func() { extExec(t, db, drop) })
	return []extract.Rule{{Table: oSchema + ".onotes", ID: "id", Subjects: []extract.Subject{{Column: "subject"}}}}
}

// orderProxy is catalogProxy over lethe_order: a strict proxy that reads
// the catalog (capture.store) at start, every minute and after DDL
// through a session.
func orderProxy(t *testing.T, db testDB) *captured {
	t.Helper()
	c := startCaptureProxy(t, db, capture.Strict, orderSchema(t, db))
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

// psql users write INSERT INTO t VALUES (…): in strict mode it is tagged
// under the subject at the subject column's position in the catalog.
func TestColumnOrder_PsqlInsertWithoutColumnListIsTagged(t *testing.T) {
	db := loadTestDB(t)
	c := orderProxy(t, db)
	const table = oSchema + ".onotes"
	res := extPsql(t, "", extEnv(db, c.Addr, db.User, db.Password), "-v", "ON_ERROR_STOP=1", "-c",
		"INSERT INTO "+table+" VALUES ('text', 'p1', 'pam', 1, 'note');"+
			"INSERT INTO "+table+" VALUES ('x', 'p2', 'pia', DEFAULT), (NULL, 'p3', 'pia', 3);"+
			"INSERT INTO "+table+" VALUES ('fewer', 'p4', 'pam');"+ // n and note take their defaults
			"INSERT INTO "+table+" SELECT 'select', 'p5', 'pam', 5;"+
			"INSERT INTO "+oSchema+".onotes_v VALUES ('vic', 'v1');")
	require.Equal(t, 0, res.Exit, res.String())
	assert.Equal(t, []string{"p1", "p4", "p5"}, c.confirmed(t, table, "pam"))
	assert.Equal(t, []string{"p2", "p3"}, c.confirmed(t, table, "pia"))
	assert.Equal(t, []string{"v1"}, c.confirmed(t, table, "vic"), "a view's own column order")
	assertLedgerHoldsStoredRows(t, c, db, table)
}

// pgx sends $n parameters (extended protocol) or inlines them (simple).
func TestColumnOrder_PgxInsertWithoutColumnListIsTagged(t *testing.T) {
	db := loadTestDB(t)
	c := orderProxy(t, db)
	const table = oSchema + ".onotes"
	for p, mode := range map[string]string{"e": "", "s": "default_query_exec_mode=simple_protocol"} {
		conn := connect(t, db.URL(c.Addr, mode))
		_, err := conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ($1, $2, $3, $4)", "body", p+"1", p+"ed", 7)
		require.NoError(t, err, mode)
		_, err = conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ($1, $2, $3, DEFAULT), ($4, $5, $6, $7)", "b", p+"2", p+"ed", "c", p+"3", p+"ed", 3)
		require.NoError(t, err, mode)
		assert.Equal(t, []string{p + "1", p + "2", p + "3"}, c.confirmed(t, table, p+"ed"), mode)
	}
	assertLedgerHoldsStoredRows(t, c, db, table)
}

// DDL through the proxy that changes the column order is read from the
// catalog before the next statement is judged.
func TestColumnOrder_AlterTableThroughTheProxyIsFollowed(t *testing.T) {
	db := loadTestDB(t)
	c := orderProxy(t, db)
	const table = oSchema + ".onotes"
	for _, mode := range []string{"", "default_query_exec_mode=simple_protocol"} {
		extExec(t, db, "DELETE FROM "+table)
		conn := connect(t, db.URL(c.Addr, mode))
		_, err := conn.Exec(ctxT(t), "ALTER TABLE "+table+" DROP COLUMN IF EXISTS body, DROP COLUMN IF EXISTS note")
		require.NoError(t, err)
		_, err = conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ('a1', 'dan', 1)")
		require.NoError(t, err, "the order without body")
		assert.Empty(t, c.confirmed(t, table, "1"), "read with the order before the DROP, the id would be the subject and the subject 1")
		_, err = conn.Exec(ctxT(t), "ALTER TABLE "+table+" ADD COLUMN note text")
		require.NoError(t, err)
		_, err = conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ($1, $2, 2, 'a note')", "a2", "dan")
		require.NoError(t, err, "four values: the order with note")
		assert.Contains(t, c.confirmed(t, table, "dan"), "a2")

		// In one transaction the DDL cannot be read before the insert.
		tx, err := conn.Begin(ctxT(t))
		require.NoError(t, err)
		_, err = tx.Exec(ctxT(t), "ALTER TABLE "+table+" DROP COLUMN n")
		require.NoError(t, err)
		_, err = tx.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ('a3', 'dan')")
		require.Error(t, err)
		assert.Equal(t, capture.CodeUnattributed, pgCode(err))
		assert.Contains(t, pgMessage(err), "name the columns")
		require.NoError(t, tx.Rollback(ctxT(t)))
		_, err = conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ('a4', 'dan', 4)")
		require.NoError(t, err, "the connection stays usable")
		_, err = conn.Exec(ctxT(t), "ALTER TABLE "+table+" ADD COLUMN body text") // for the next mode
		require.NoError(t, err)
	}
	assertLedgerHoldsStoredRows(t, c, db, table)
}

// Without capture.store nothing reads the column order: strict mode
// refuses the insert, naming both fixes, and the connection stays usable.
func TestColumnOrder_UnknownOrderIsRefusedNamingTheFix(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, orderSchema(t, db))
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctxT(t), "INSERT INTO "+oSchema+".onotes VALUES ('b', 'u1', 'uma', 1)")
	require.Error(t, err)
	assert.Equal(t, capture.CodeUnattributed, pgCode(err))
	assert.Contains(t, pgMessage(err), "name the columns")
	assert.Contains(t, pgMessage(err), "capture.store")
	_, err = conn.Exec(ctxT(t), "INSERT INTO "+oSchema+".onotes (id, subject) VALUES ('u2', 'uma')")
	require.NoError(t, err)
	assert.Equal(t, []string{"u2"}, c.confirmed(t, oSchema+".onotes", "uma"))
	assert.Equal(t, 1, countRows(t, db, oSchema+".onotes"))
}

// DDL around the proxy is read only by the periodic read: until then the
// proxy tags with the order it knows, and a dropped column moves the
// subject. The WAL follower records the committed row under the subject
// the server stored.
func TestColumnOrder_StaleOrderAroundTheProxyIsCorrectedByTheFollower(t *testing.T) {
	db := loadTestDB(t)
	c := orderProxy(t, db)
	const table = oSchema + ".onotes"
	extExec(t, db, "ALTER TABLE "+table+" DROP COLUMN body") // not through the proxy
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctxT(t), "INSERT INTO "+table+" VALUES ('s1', 'sue', 1)")
	require.NoError(t, err)
	assert.Contains(t, c.confirmed(t, table, "sue"), "s1", "the follower's record of the stored row")
}
