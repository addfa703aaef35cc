//go:build integration

package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// slotExists reports whether the server has a replication slot named name.
func slotExists(t *testing.T, db testDB, name string) bool {
	t.Helper()
	conn := connect(t, db.URL(db.Addr(), ""))
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", name).Scan(&n))
	return n > 0
}

// serveFails runs lethe-proxy serve, which must stop on its own with an
// error, and returns its log.
func (f *forgetBinary) serveFails(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.bin, "serve", "--config", f.cfg)
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the start must fail: %s", out)
	require.NoError(t, ctx.Err(), "the start must fail, not hang: %s", out)
	return string(out)
}

// A start that fails (a port taken, a tokens file that does not load)
// stops before it makes the WAL follower's slot, which would keep the
// server's WAL until someone drops it.
func TestServe_AFailedStartLeavesNoSlot(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "start_docs", "id text PRIMARY KEY, user_id text")
	const tables = `    - {table: public.start_docs, id: id, subjects: [user_id]}`
	taken := func(t *testing.T, addr string) {
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
	}
	pinecone := func(addr string) []string {
		return []string{"pinecone:", "  listen: " + addr, "  indexes:",
			`    - {name: docs, host: "http://127.0.0.1:9", namespaces: [{namespace: "*", subjects: [user_id]}]}`}
	}
	for _, tc := range []struct {
		name     string
		pinecone bool
		breakIt  func(t *testing.T, f *forgetBinary, pineconeAddr string)
		want     string
	}{
		{name: "postgres port taken", breakIt: func(t *testing.T, f *forgetBinary, _ string) { taken(t, f.proxyAddr) }, want: "postgres.listen"},
		{name: "admin port taken", breakIt: func(t *testing.T, f *forgetBinary, _ string) { taken(t, f.admin) }, want: "forget.admin"},
		{name: "pinecone port taken", pinecone: true, breakIt: func(t *testing.T, _ *forgetBinary, addr string) { taken(t, addr) }, want: "pinecone.listen"},
		{name: "tokens file that does not load", breakIt: func(t *testing.T, f *forgetBinary, _ string) {
			require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tokens.json"), []byte("{not json"), 0o600))
		}, want: "tokens_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []string
			pcAddr := freePort(t)
			if tc.pinecone {
				extra = pinecone(pcAddr)
			}
			f := newForgetBinary(t, db, tables, extra...)
			tc.breakIt(t, f, pcAddr)
			logs := f.serveFails(t)
			assert.Contains(t, logs, tc.want)
			assert.False(t, slotExists(t, db, f.slot), "a failed start left slot %s: %s", f.slot, logs)
		})
	}
}

// Two databases on one server, each with a proxy and the default slot
// name: both start, each with a slot of its own (slot names are unique
// across the server, so one shared default name made the second fail).
func TestServe_TwoDatabasesOnOneServerEachGetTheirOwnSlot(t *testing.T) {
	db := loadTestDB(t)
	bin := buildProxy(t)
	admin := connect(t, db.URL(db.Addr(), ""))
	defer admin.Close(context.Background())
	var procs []*exec.Cmd
	for i := range 2 {
		name := fmt.Sprintf("lethe_it_startup_%d_%d", os.Getpid(), i)
		_, err := admin.Exec(ctxT(t), "CREATE DATABASE "+name)
		require.NoError(t, err)
		slot := config.DefaultSlotName(name)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, p := range procs {
				p.Process.Kill()
				p.Wait()
			}
			c, err := pgx.Connect(ctx, db.URL(db.Addr(), ""))
			if err != nil {
				t.Logf("cleaning up %s: %v", name, err)
				return
			}
			defer c.Close(ctx)
			for err = dropIn(ctx, db, name, slot); err != nil && ctx.Err() == nil; err = dropIn(ctx, db, name, slot) {
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Logf("dropping database %s: %v", name, err)
			}
		})
		other := db
		other.DB = name
		conn := connect(t, other.URL(db.Addr(), ""))
		_, err = conn.Exec(ctxT(t), "CREATE TABLE notes (id text PRIMARY KEY, user_id text); INSERT INTO notes VALUES ('n1', 'alice')")
		conn.Close(context.Background())
		require.NoError(t, err)

		dir := t.TempDir()
		addr := freePort(t)
		cfg := filepath.Join(dir, "lethe.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres: {listen: %s, upstream: %s}
capture:
  ledger: {sqlite: ledger.db}
  store: "host=%s port=%s user=%s password=%s dbname=%s sslmode=disable"
  tables: [{table: public.notes, id: id, subjects: [user_id]}]
`, addr, db.Addr(), db.Host, db.Port, db.User, db.Password, name)), 0o600))
		procs = append(procs, startProxyBinary(t, bin, cfg, addr))
		// The relay's port is bound before the slot is made: the log says
		// when the start is done.
		require.Eventually(t, func() bool {
			logs, _ := os.ReadFile(cfg + ".log")
			return strings.Contains(string(logs), "lethe-proxy started")
		}, 60*time.Second, 20*time.Millisecond)
		assert.True(t, slotExists(t, db, slot), "proxy %d follows slot %s", i, slot)

		// The row written before the proxy started is in its ledger.
		l, err := ledger.OpenSQLite(filepath.Join(dir, "ledger.db"), ledger.Options{})
		require.NoError(t, err)
		h, err := ledger.NewHasher(testSalt)
		require.NoError(t, err)
		recs, err := l.BySubject(ctxT(t), h.Hash("alice"))
		l.Close()
		require.NoError(t, err)
		require.Len(t, recs, 1, "the row committed before the first start is recorded at it")
		assert.Equal(t, "n1", recs[0].RecordID)
		assert.Equal(t, ledger.StateConfirmed, recs[0].State)
	}
	require.NotEqual(t, config.DefaultSlotName(fmt.Sprintf("lethe_it_startup_%d_0", os.Getpid())),
		config.DefaultSlotName(fmt.Sprintf("lethe_it_startup_%d_1", os.Getpid())))
}

// dropIn drops a slot and its publications from inside database name
// (publications belong to their database).
func dropIn(ctx context.Context, db testDB, name, slot string) error {
	other := db
	other.DB = name
	c, err := pgx.Connect(ctx, other.URL(db.Addr(), ""))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return walfollow.Drop(ctx, c, slot)
}

// `ledger subject` run right after a row is committed around the proxy
// lists it: it waits until the follower has recorded every row committed
// before it ran, as forget's preview does.
func TestLedgerSubject_ListsARowCommittedJustBefore(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "ls_notes", "id text PRIMARY KEY, user_id text")
	f := newForgetBinary(t, db, `    - {table: public.ls_notes, id: id, subjects: [user_id]}`)
	f.start(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		_, err := direct.Exec(ctxT(t), "INSERT INTO ls_notes VALUES ($1, 'alice')", id)
		require.NoError(t, err)
		out, err := f.cli(t, "alice\n", "ledger", "subject", "--config", f.cfg)
		require.NoError(t, err)
		assert.Contains(t, out, "public.ls_notes  "+id+" ", "round %d: %s", i, out)
	}
	out, err := f.cli(t, "alice\n", "ledger", "subject", "--config", f.cfg, "--wait", "0")
	require.NoError(t, err)
	assert.Contains(t, out, "public.ls_notes  n2 ")
}
