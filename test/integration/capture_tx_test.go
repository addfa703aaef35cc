//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
)

// docsRule configures public.<name>(id text, user_id text, meta jsonb).
func docsTable(t *testing.T, db testDB, name string) []extract.Rule {
	pgxTable(t, db, name, "id text PRIMARY KEY, user_id text, meta jsonb")
	return []extract.Rule{{Table: "public." + name, ID: "id", Subjects: []extract.Subject{{Column: "user_id"}}}}
}

// states returns "id:state" for every record of subject in table, sorted.
func (c *captured) states(t *testing.T, table, subject string) []string {
	c.confirmed(t, table, subject) // let queued decisions settle
	recs, err := c.ledger.BySubject(context.Background(), c.hasher.Hash(subject))
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		if r.Table == table {
			out = append(out, r.RecordID+":"+string(r.State))
		}
	}
	sort.Strings(out)
	return out
}

func TestCapture_TagsOnlyWhatCommitted(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "cap_tx"))
	conn := connect(t, db.URL(c.Addr, ""))
	ctx := ctxT(t)
	exec := func(sql string, args ...any) error { _, err := conn.Exec(ctx, sql, args...); return err }

	// Implicit transaction: committed.
	require.NoError(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a1", "ann"))
	// Explicit rollback: dropped.
	require.NoError(t, exec("BEGIN"))
	require.NoError(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a2", "ann"))
	require.NoError(t, exec("ROLLBACK"))
	// Savepoint rollback inside a committed transaction.
	require.NoError(t, exec("BEGIN"))
	require.NoError(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a3", "ann"))
	require.NoError(t, exec("SAVEPOINT s1"))
	require.NoError(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a4", "ann"))
	require.NoError(t, exec("ROLLBACK TO SAVEPOINT s1"))
	require.NoError(t, exec("COMMIT"))
	// COMMIT of an aborted transaction answers ROLLBACK.
	require.NoError(t, exec("BEGIN"))
	require.NoError(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a5", "ann"))
	require.Error(t, exec("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a1", "ann")) // duplicate key
	require.NoError(t, exec("COMMIT"))
	// Error in the middle of a pipeline: the whole implicit transaction rolls back.
	b := &pgx.Batch{}
	b.Queue("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a6", "ann")
	b.Queue("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a1", "ann")
	b.Queue("INSERT INTO cap_tx (id, user_id) VALUES ($1, $2)", "a7", "ann")
	require.Error(t, conn.SendBatch(ctx, b).Close())
	// Simple protocol with literals, committed.
	simple := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol"))
	_, err := simple.Exec(ctx, "INSERT INTO cap_tx (id, user_id) VALUES ('a8', 'ann'), ('b1', 'bob')")
	require.NoError(t, err)

	var committed []string
	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctx, "SELECT id FROM cap_tx WHERE user_id = 'ann' ORDER BY id")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		committed = append(committed, id+":confirmed")
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"a1:confirmed", "a3:confirmed", "a8:confirmed"}, committed, "what the server committed")
	assert.Equal(t, committed, c.states(t, "public.cap_tx", "ann"), "the ledger holds exactly the committed rows")
	assert.Equal(t, []string{"b1:confirmed"}, c.states(t, "public.cap_tx", "bob"))
}

func TestCapture_StrictRefusesUnattributableWrites(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "cap_strict"))
	conn := connect(t, db.URL(c.Addr, ""))
	for _, sql := range []string{
		"INSERT INTO cap_strict (id, user_id) SELECT 'x' || g, 'ann' FROM generate_series(1, 3) g",
		"TRUNCATE cap_strict",
		"WITH w AS (INSERT INTO cap_strict (id, user_id) VALUES ('c1', 'ann') RETURNING id) SELECT * FROM w",
	} {
		_, err := conn.Exec(ctxT(t), sql)
		require.Error(t, err, sql)
		assert.Equal(t, capture.CodeUnattributed, pgCode(err), sql)
		assert.Contains(t, pgMessage(err), "cannot be attributed", sql)
	}
	assert.Equal(t, 0, countRows(t, db, "cap_strict"), "nothing was written")
	// Other statements on the connection keep working.
	_, err := conn.Exec(ctxT(t), "INSERT INTO cap_strict (id, user_id) VALUES ($1, $2)", "ok1", "ann")
	require.NoError(t, err)
}

func TestCapture_PermissiveRecordsUnattributedWrites(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Permissive, docsTable(t, db, "cap_perm"))
	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctxT(t), "INSERT INTO cap_perm (id, user_id) SELECT 'x' || g, 'ann' FROM generate_series(1, 3) g")
	require.NoError(t, err)
	assert.Equal(t, 3, countRows(t, db, "cap_perm"))
	var counts []ledger.TableCount
	for range 100 {
		counts, err = c.ledger.Counts(context.Background())
		require.NoError(t, err)
		if len(counts) > 0 && counts[0].State == ledger.StateConfirmed {
			break
		}
	}
	require.NotEmpty(t, counts)
	assert.Equal(t, "public.cap_perm", counts[0].Table)
}

// flakyLedger fails Intend while down is set: the ledger is unreachable.
type flakyLedger struct {
	ledger.Ledger
	down atomic.Bool
}

func (f *flakyLedger) Intend(ctx context.Context, e []ledger.Entry) (ledger.IntentID, error) {
	if f.down.Load() {
		return 0, fmt.Errorf("%w: test outage", ledger.ErrUnavailable)
	}
	return f.Ledger.Intend(ctx, e)
}

func (f *flakyLedger) StartIntend(ctx context.Context, e []ledger.Entry) ledger.Intending {
	if f.down.Load() {
		return ledger.Intended(0, fmt.Errorf("%w: test outage", ledger.ErrUnavailable))
	}
	return f.Ledger.StartIntend(ctx, e)
}

func TestCapture_FailsClosedWhenTheLedgerIsDown(t *testing.T) {
	db := loadTestDB(t)
	rules := docsTable(t, db, "cap_down")
	c := startCaptureProxy(t, db, capture.Strict, rules)
	// Swap in a ledger that can go down, behind a second capture proxy.
	flaky := &flakyLedger{Ledger: c.ledger}
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	cap2 := capture.New(capture.Config{Rules: compiled, Ledger: flaky, Hasher: c.hasher, ConfirmHold: testConfirmHold})
	t.Cleanup(cap2.Close)
	p := startProxy(t, db, func(s *pgwireServer) { s.Observer = pgcapture.New(cap2, pgcapture.Config{}) })
	conn := connect(t, db.URL(p.Addr, ""))

	flaky.down.Store(true)
	_, err = conn.Exec(ctxT(t), "INSERT INTO cap_down (id, user_id) VALUES ($1, $2)", "d1", "ann")
	require.Error(t, err)
	assert.Equal(t, capture.CodeLedgerDown, pgCode(err))
	// Reads and writes to other tables still work on the same connection.
	var one int
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT 1").Scan(&one))
	flaky.down.Store(false)
	_, err = conn.Exec(ctxT(t), "INSERT INTO cap_down (id, user_id) VALUES ($1, $2)", "d2", "ann")
	require.NoError(t, err)
	var ids []string
	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctxT(t), "SELECT id FROM cap_down ORDER BY id")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	assert.Equal(t, []string{"d2"}, ids, "the refused write did not commit")
	assert.Equal(t, int64(1), cap2.Stats.Refused.Load())
}

func TestCapture_ApplicationDeletesMarkRecordsDeletedWhenTheyCommit(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "cap_del"))
	conn := connect(t, db.URL(c.Addr, ""))
	ctx := ctxT(t)
	_, err := conn.Exec(ctx, "INSERT INTO cap_del (id, user_id) VALUES ('k1', 'ann'), ('k2', 'ann'), ('k3', 'ann')")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "DELETE FROM cap_del WHERE id = $1", "k1")
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DELETE FROM cap_del WHERE id = ANY($1)", []string{"k2"})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	simple := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol"))
	_, err = simple.Exec(ctx, "DELETE FROM cap_del WHERE id IN ('k3')")
	require.NoError(t, err)

	var got []string
	for range 100 {
		got = c.states(t, "public.cap_del", "ann")
		if len(got) == 3 && got[0] == "k1:deleted" && got[2] == "k3:deleted" {
			break
		}
	}
	assert.Equal(t, []string{"k1:deleted", "k2:confirmed", "k3:deleted"}, got)
}

func TestCapture_FollowsSearchPathIncludingSetLocal(t *testing.T) {
	db := loadTestDB(t)
	rules := docsTable(t, db, "cap_sp")
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctxT(t), "CREATE SCHEMA IF NOT EXISTS lethe_other; DROP TABLE IF EXISTS lethe_other.cap_sp; CREATE TABLE lethe_other.cap_sp (id text PRIMARY KEY, user_id text, meta jsonb)")
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), "DROP SCHEMA lethe_other CASCADE") })
	c := startCaptureProxy(t, db, capture.Strict, rules)
	conn := connect(t, db.URL(c.Addr, "default_query_exec_mode=simple_protocol"))
	ctx := ctxT(t)
	for _, sql := range []string{
		"BEGIN",
		"SET LOCAL search_path TO lethe_other",
		"INSERT INTO cap_sp (id, user_id) VALUES ('o1', 'ann')", // lethe_other.cap_sp: not configured
		"COMMIT",
		"INSERT INTO cap_sp (id, user_id) VALUES ('p1', 'ann')", // public again after the transaction
		"SET search_path TO lethe_other, public",
		// PostgreSQL writes lethe_other.cap_sp; Lethe cannot see which
		// schemas hold a table of that name, so it resolves to the first
		// *configured* one and over-attributes (safe: forget deletes by id
		// and subject, and finds nothing in public.cap_sp).
		"INSERT INTO cap_sp (id, user_id) VALUES ('o2', 'ann')",
		"INSERT INTO public.cap_sp (id, user_id) VALUES ('p2', 'ann')",
	} {
		_, err := conn.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	assert.Equal(t, []string{"o2:confirmed", "p1:confirmed", "p2:confirmed"}, c.states(t, "public.cap_sp", "ann"),
		"o1 (under SET LOCAL) is not tagged; p1 (after COMMIT restored the path) is")
}
