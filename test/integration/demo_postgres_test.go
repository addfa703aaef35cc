//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
)

// TestDemo_PostgresForgetsAliceRowsInTheSameCertificate: demo --run with
// DATABASE_URL naming the test cluster creates its own table, writes
// alice's and bob's rows through the proxy with pgx, and alice's one
// certificate has a PostgreSQL layer with her two rows deleted and
// verified absent beside the Pinecone layer; bob's rows stay. A second
// run in the same state directory reuses the table; --clean drops the
// table, the slot and the publications it made.
func TestDemo_PostgresForgetsAliceRowsInTheSameCertificate(t *testing.T) {
	db := loadTestDB(t)
	bin := buildProxy(t)
	// One context for the whole test, which runs the demo three times:
	// ctxT's 30 s is one step's bound, and a loaded machine needs more.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	direct := connect(t, db.DSN(db.Addr(), ""))
	const table, slot = "public.lethe_demo_memories", "lethe_demo_memories"
	// Leftovers of an earlier run of this test that stopped half-way.
	for _, stmt := range []string{
		"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'lethe_demo_memories' AND NOT active",
		"DROP PUBLICATION IF EXISTS lethe_demo_memories", "DROP PUBLICATION IF EXISTS lethe_demo_memories_inserts",
		"DROP TABLE IF EXISTS " + table,
	} {
		_, err := direct.Exec(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	work := t.TempDir()
	demo := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"demo"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME=", "LETHE_SUBJECT_SALT=", "LETHE_SUBJECT_SALT_FILE=",
			"PGPASSWORD=", "DATABASE_URL="+db.URL(db.Addr(), ""))
		out, err := cmd.CombinedOutput()
		if exitErr, ok := err.(*exec.ExitError); ok {
			return string(out), exitErr.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	out, code := demo("--run")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict: valid")
	assert.Contains(t, out, `psql "host=127.0.0.1 port=`, "prints the psql line through the proxy")
	assert.NotContains(t, out, "WAL follower is off", "the test cluster has wal_level logical and a superuser")
	assert.NotContains(t, out, db.Password, "the password stays out of the output")
	stateDir := filepath.Join(work, "lethe-demo")
	assert.NotContains(t, mustRead(t, filepath.Join(stateDir, "config.yaml")), db.Password, "and out of the configuration")

	certFile := filepath.Join(stateDir, "certificate-alice.json")
	res := certificate.Verify([]byte(mustRead(t, certFile)), mustKeys(t, filepath.Join(stateDir, "trusted-keys.json")), time.Now())
	require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
	pgLayer := certLayer(t, *res.Payload, table)
	assert.Equal(t, "postgres", pgLayer.Store)
	assert.EqualValues(t, 2, pgLayer.Deleted)
	assert.Zero(t, pgLayer.Residual)
	assert.True(t, pgLayer.VerifiedAbsent)
	assert.Equal(t, "pinecone", certLayer(t, *res.Payload, "demo/*").Store)

	ids := func() []string {
		rows, err := direct.Query(ctx, "SELECT id FROM "+table+" ORDER BY id")
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, []string{"pg-bob-1", "pg-bob-2"}, ids(), "bob's rows stay")

	out, code = demo("--run")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict: valid")
	assert.Equal(t, []string{"pg-bob-1", "pg-bob-2"}, ids())

	out, code = demo("--clean")
	require.Equal(t, 0, code, out)
	assert.NoDirExists(t, stateDir)
	var tableLeft, slotLeft, pubsLeft bool
	require.NoError(t, direct.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL,
	  EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $2),
	  EXISTS (SELECT 1 FROM pg_publication WHERE pubname IN ($2, $2 || '_inserts'))`, table, slot).Scan(&tableLeft, &slotLeft, &pubsLeft))
	assert.False(t, tableLeft, "the demo's table is dropped")
	assert.False(t, slotLeft, "the demo's slot is dropped")
	assert.False(t, pubsLeft, "the demo's publications are dropped")
}
