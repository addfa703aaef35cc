//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
)

func (f *forgetBinary) replay(t *testing.T, args ...string) commandRun {
	t.Helper()
	cmd := exec.Command(f.bin, append([]string{"replay", "--config", f.cfg, "--reports", f.dir}, args...)...)
	cmd.Env = f.env
	cmd.Dir = f.dir
	r := runCommand(t, cmd)
	t.Logf("replay %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	return r
}

// A restore brings alice back: her rows are re-inserted straight into the
// server while the proxy and its WAL follower are stopped (the state a
// restored backup leaves in the live table, without a second cluster to
// restore into; a restore through the running follower would be caught
// as late writes instead). Replay deletes them again, keeps bob's, logs a
// forget.replayed report naming alice's request that verifies, and the
// log still verifies as grown from the checkpoint saved before.
func TestReplay_RestoredRowsAreForgottenAgain(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "replay_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.replay_docs, id: id, subjects: [user_id]}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for i := range 3 {
		for _, who := range []string{"alice", "bob"} {
			_, err := app.Exec(ctx, `INSERT INTO replay_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, fmt.Sprintf("%s-%d", who, i), who)
			require.NoError(t, err)
		}
	}
	app.Close(ctx)
	_, cert := f.forgetViaCLI(t, "alice")
	direct := connect(t, db.URL(db.Addr(), ""))
	const ids = "SELECT id FROM replay_docs ORDER BY id"
	require.Equal(t, []string{"bob-0", "bob-1", "bob-2"}, tableIDs(t, direct, ids))
	keys := filepath.Join(f.dir, "keys.json")
	saved := filepath.Join(f.dir, "checkpoint.txt")
	_, err := f.cli(t, "", "log", "verify", "--keys", keys, "--save", saved)
	require.NoError(t, err)
	f.stopProxyAndFollower(t, db)

	for i := range 3 {
		_, err := direct.Exec(ctx, `INSERT INTO replay_docs (id, user_id, embedding) VALUES ($1, 'alice', '[1,2,3]')`, fmt.Sprintf("alice-%d", i))
		require.NoError(t, err)
	}
	dry := f.replay(t, "--dry-run")
	assert.Equal(t, 1, dry.code, "a dry run that finds records exits 1")
	assert.Len(t, tableIDs(t, direct, ids), 6, "a dry run deletes nothing")

	run := f.replay(t)
	require.Equal(t, 0, run.code)
	assert.Equal(t, []string{"bob-0", "bob-1", "bob-2"}, tableIDs(t, direct, ids), "alice is gone again, bob kept")
	assert.Regexp(t, `postgres\s+public.replay_docs\s+found 3\s+deleted 3\s+residual 0`, run.stdout)
	assert.NotContains(t, run.stdout+run.stderr, "alice")

	reportFile := filepath.Join(f.dir, "replay-"+cert.RequestID+".json")
	r, err := certificate.VerifyReport([]byte(mustRead(t, reportFile)), mustKeys(t, keys))
	require.NoError(t, err, "the replay's report is signed and a signed checkpoint covers its event")
	assert.Equal(t, certificate.EventReplayed, r.Kind)
	assert.Equal(t, cert.RequestID, r.RunID, "the report names the original request")
	require.Len(t, r.Layers, 1)
	assert.Equal(t, int64(3), r.Layers[0].Done)
	var sr certificate.SignedReport
	require.NoError(t, json.Unmarshal([]byte(mustRead(t, reportFile)), &sr))
	e, err := certificate.ParseEvent(sr.Log.Leaf)
	require.NoError(t, err)
	assert.Equal(t, cert.RequestID, e.RequestID)

	again := f.replay(t)
	require.Equal(t, 0, again.code)
	assert.Contains(t, again.stdout, "nothing of the subject came back")

	f.start(t)
	out, err := f.cli(t, "", "log", "verify", "--keys", keys, "--since", saved)
	require.NoError(t, err, "the log with the replay's events is consistent with the checkpoint saved before: %s", out)
}

// A ledger that recorded another system identifier for capture.store (a
// cluster loaded from a backup) makes the relay refuse writes (LT006,
// naming lethe-proxy replay) until replay ran; then writes go through.
func TestReplay_RestoreDetectedRefusesWritesUntilReplay(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "replay_guard", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.replay_guard, id: id, subjects: [user_id]}
  recovery_interval: 1s`)
	f.start(t) // records what it sees of the server
	f.stop(t)

	l, err := ledger.Open(context.Background(), ledger.Location{SQLite: filepath.Join(f.dir, "ledger.db")}, ledger.Options{})
	require.NoError(t, err)
	key := fmt.Sprintf("postgres://%s:%s/%s", db.Host, db.Port, db.DB)
	seen, ok, err := l.StoreSeen(ctxT(t), key)
	require.NoError(t, err)
	require.True(t, ok, "the proxy recorded the server under %s", key)
	require.NotEmpty(t, seen.System)
	seen.System = "1" // the server the backup was taken from
	require.NoError(t, l.RecordStoreSeen(ctxT(t), key, seen))
	require.NoError(t, l.Close())

	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err = app.Exec(ctx, `INSERT INTO replay_guard (id, user_id, embedding) VALUES ('g1', 'carol', '[1,2,3]')`)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "the write is refused: %v", err)
	assert.Equal(t, "LT006", pgErr.Code)
	assert.Contains(t, pgErr.Message+pgErr.Hint, "lethe-proxy replay")
	_, err = app.Exec(ctx, `SELECT 1`)
	require.NoError(t, err, "the connection stays usable")
	logs, _ := os.ReadFile(f.cfg + ".log")
	assert.Contains(t, string(logs), "system identifier changed from 1 to")

	run := f.replay(t)
	require.Equal(t, 0, run.code)
	assert.Contains(t, run.stdout, "restore cleared for 1 store")
	// The proxy sees the cleared mark at its next check (every second here).
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err = app.Exec(ctx, `INSERT INTO replay_guard (id, user_id, embedding) VALUES ('g1', 'carol', '[1,2,3]')`)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err, "writes go through once replay ran")
}
