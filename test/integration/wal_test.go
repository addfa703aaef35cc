//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

var walSlots atomic.Int64

// walSlot names a replication slot and publications for one test and
// drops them when it ends: a slot left behind keeps the server's WAL
// forever.
func walSlot(t *testing.T, db testDB) string {
	name := fmt.Sprintf("it_%d_%d", os.Getpid(), walSlots.Add(1))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, db.URL(db.Addr(), ""))
		if err != nil {
			t.Logf("dropping slot %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		// A follower that just stopped may hold the slot a moment longer.
		for err = walfollow.Drop(ctx, conn, name); err != nil && ctx.Err() == nil; err = walfollow.Drop(ctx, conn, name) {
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Logf("dropping slot %s: %v", name, err)
		}
	})
	return name
}

// awaitFollowed waits until the follower of slot has made durable every
// change the server committed before the call.
func awaitFollowed(t *testing.T, db testDB, slot string) {
	t.Helper()
	conn := connect(t, db.URL(db.Addr(), ""))
	defer conn.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, walfollow.AwaitCommitted(ctx, conn, slot, nil)) // the proxy under test read the slot before it served
}

// Rows written straight to the server, around the proxy, are in the
// ledger, counted by preview, and deleted and certified by forget.
func TestWAL_RowsWrittenAroundTheProxyAreTaggedAndForgotten(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "wal_docs", "id text PRIMARY KEY, user_id text DEFAULT current_setting('app.subject', true), embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.wal_docs, id: id, subjects: [user_id]}`)
	f.start(t)
	ctx := ctxT(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	// capture.intents: auto (the default): once the follower streams the
	// table in full, the proxy's writes to it take no intent.
	require.Eventually(t, func() bool { return f.metrics(t)["lethe_capture_followed_tables"] == 1 }, 30*time.Second, 20*time.Millisecond)

	_, err := direct.Exec(ctx, `INSERT INTO wal_docs VALUES ('m1', 'alice', '[1,2,3]'), ('m2', 'bob', '[1,2,3]')`)
	require.NoError(t, err)
	_, err = app.Exec(ctx, `INSERT INTO wal_docs (id, user_id, embedding) VALUES ('p1', 'alice', '[1,2,3]')`)
	require.NoError(t, err)
	// The server fills the subject in: the proxy cannot see it, the WAL does.
	_, err = app.Exec(ctx, `SET app.subject = 'alice'`)
	require.NoError(t, err)
	_, err = app.Exec(ctx, `INSERT INTO wal_docs (id, embedding) VALUES ('s1', '[1,2,3]')`)
	require.NoError(t, err)
	// The proxy reads the text sent, the server stores the cast's result.
	_, err = app.Exec(ctx, `INSERT INTO wal_docs (id, user_id) VALUES ('c1', 'carol@example.comXYZ'::varchar(17))`)
	require.NoError(t, err)
	awaitFollowed(t, db, f.slot)
	metrics := f.metrics(t)
	assert.Equal(t, 1.0, metrics["lethe_wal_rows_agreeing_total"], "p1")
	assert.Equal(t, 1.0, metrics["lethe_wal_rows_disagreeing_total"], "c1: a live check of the parser")
	assert.Equal(t, 3.0, metrics["lethe_wal_rows_not_seen_by_proxy_total"], "m1 and m2 around the proxy, s1 with the subject filled in by the server")
	assert.Equal(t, 3.0, metrics[`lethe_wal_table_rows_not_seen_by_proxy_total{table="public.wal_docs"}`], "counted per table")
	assert.Equal(t, 1.0, metrics[`lethe_wal_table_rows_disagreeing_total{table="public.wal_docs"}`], "counted per table")
	assert.Equal(t, 2.0, metrics["lethe_capture_followed_writes_total"], "p1 and c1 went without an intent (s1 names no subject the proxy can see)")
	assert.Equal(t, 0.0, metrics["lethe_capture_intents_total"])

	out, err := f.cli(t, "alice\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Token  string `json:"confirm_token"`
		Layers []struct {
			Table         string `json:"table"`
			LedgerRecords int    `json:"ledger_records"`
			Rows          int    `json:"rows"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
	require.Len(t, pv.Layers, 1, out)
	assert.Equal(t, 3, pv.Layers[0].LedgerRecords, "the ledger knows the rows written around the proxy: %s", out)
	assert.Equal(t, 3, pv.Layers[0].Rows)

	out, err = f.cli(t, "alice\n", "forget", "confirm", "--token", pv.Token)
	require.NoError(t, err)
	var receipt struct {
		RequestID string `json:"request_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &receipt), out)
	require.Eventually(t, func() bool { return f.status(t, receipt.RequestID)["status"] == "completed" }, 30*time.Second, 50*time.Millisecond)
	var left, bob int
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FILTER (WHERE user_id = 'alice'), count(*) FILTER (WHERE user_id = 'bob') FROM wal_docs`).Scan(&left, &bob))
	assert.Equal(t, [2]int{0, 1}, [2]int{left, bob})

	certFile := filepath.Join(f.dir, "cert.json")
	_, err = f.cli(t, "", "forget", "certificate", receipt.RequestID, "--out", certFile)
	require.NoError(t, err)
	out, err = f.cli(t, "", "verify", "--keys", filepath.Join(f.dir, "keys.json"), certFile)
	require.NoError(t, err, out)
	require.Contains(t, out, "verdict: valid\n")

	// A late write about alice, around the proxy (which would refuse it):
	// the follower's backstop deletes it and the request's status and the
	// log show it (forget.late_writes: delete, the default).
	_, err = direct.Exec(ctx, `INSERT INTO wal_docs VALUES ('late1', 'alice', '[1,2,3]'), ('b2', 'bob', '[1,2,3]')`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var n int
		return direct.QueryRow(ctx, `SELECT count(*) FROM wal_docs WHERE user_id = 'alice'`).Scan(&n) == nil && n == 0
	}, 30*time.Second, 50*time.Millisecond, "the late write is deleted")
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM wal_docs WHERE user_id = 'bob'`).Scan(&bob))
	assert.Equal(t, 2, bob, "only the forgotten subject's rows")
	var late []any
	require.Eventually(t, func() bool {
		late, _ = f.status(t, receipt.RequestID)["late_writes"].([]any)
		return len(late) == 1
	}, 10*time.Second, 50*time.Millisecond)
	lw := late[0].(map[string]any)
	assert.Equal(t, "public.wal_docs", lw["table"])
	assert.EqualValues(t, 1, lw["deleted"])
	assert.EqualValues(t, 0, lw["residual"])
}

// TestWAL_KillNineAndServerRestartLoseNoCommittedRow writes through the
// proxy and around it while the proxy is killed with SIGKILL again and
// again and PostgreSQL restarts once, then checks that every committed
// row is in the ledger, confirmed, under the subject it stores.
func TestWAL_KillNineAndServerRestartLoseNoCommittedRow(t *testing.T) {
	db := privateCluster(t)
	pgxTable(t, db, "wal_crash", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	bin, cfg, addr, slot := walProxyBinary(t, db, "public.wal_crash")

	var seq, viaProxy atomic.Int64 // viaProxy: inserts the proxy answered
	write := func(url, via string, stop <-chan struct{}, wg *sync.WaitGroup) {
		defer wg.Done()
		for {
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					continue
				}
			}
			for {
				select {
				case <-stop:
					conn.Close(context.Background())
					return
				default:
				}
				n := seq.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := conn.Exec(ctx, "INSERT INTO wal_crash (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')",
					fmt.Sprintf("%s-%d", via, n), fmt.Sprintf("user%d@example.com", n%3))
				cancel()
				if err != nil {
					conn.Close(context.Background())
					break // reconnect: the proxy or the server went away
				}
				if via != "direct" {
					viaProxy.Add(1)
				}
			}
		}
	}

	const rounds = 4
	for round := range rounds {
		proc := startProxyBinary(t, bin, cfg, addr)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(3)
		go write(db.URL(addr, "sslmode=disable"), "proxy", stop, &wg)
		go write(db.URL(addr, "sslmode=disable"), "proxy2", stop, &wg)
		go write(db.URL(db.Addr(), ""), "direct", stop, &wg)
		// Kill mid-load: after a while, and once the proxy has taken
		// some writes this round, however slow the machine.
		before := viaProxy.Load()
		time.Sleep(time.Duration(400+100*round) * time.Millisecond)
		for deadline := time.Now().Add(20 * time.Second); viaProxy.Load()-before < 10 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		if round == 1 {
			pgctl(t, db, "restart", "-m", "fast", "-l", db.Data+"/../log/postgres.log")
			time.Sleep(500 * time.Millisecond)
		}
		require.NoError(t, proc.Process.Signal(syscall.SIGKILL))
		proc.Wait()
		// Writes around the proxy go on while it is down.
		time.Sleep(200 * time.Millisecond)
		close(stop)
		wg.Wait()
	}

	proc := startProxyBinary(t, bin, cfg, addr)
	awaitFollowed(t, db, slot)
	require.NoError(t, proc.Process.Signal(syscall.SIGTERM))
	require.NoError(t, proc.Wait())

	l, err := ledger.OpenSQLite(filepath.Join(filepath.Dir(cfg), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	confirmed := map[string]string{} // record id → subject
	for i := range 3 {
		subject := fmt.Sprintf("user%d@example.com", i)
		recs, err := l.BySubject(context.Background(), h.Hash(subject))
		require.NoError(t, err)
		for _, r := range recs {
			if r.State == ledger.StateConfirmed {
				confirmed[r.RecordID] = subject
			}
		}
	}
	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctxT(t), "SELECT id, user_id FROM wal_crash")
	require.NoError(t, err)
	committed, _ := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, Subject string }])
	var direct, missing int
	for _, r := range committed {
		if r.ID[:6] == "direct" {
			direct++
		}
		if confirmed[r.ID] != r.Subject {
			missing++
		}
	}
	t.Logf("%d rows committed (%d around the proxy), %d confirmed in the ledger", len(committed), direct, len(confirmed))
	require.Greater(t, direct, 20, "the load wrote around the proxy")
	require.Greater(t, len(committed)-direct, 20, "the load wrote through the proxy")
	assert.Zero(t, missing, "committed rows not confirmed in the ledger under their stored subject")

	// Slot hygiene from the CLI: status, drop, status again.
	status := exec.Command(bin, "wal", "status", "--config", cfg)
	out, err := status.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "slot "+slot+": active=false")
	assert.Contains(t, string(out), "tables: public.wal_crash\n")
	out, err = exec.Command(bin, "wal", "drop", "--config", cfg).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "wal", "status", "--config", cfg).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "does not exist")
}

// metrics reads the proxy's /metrics series without labels.
func (f *forgetBinary) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	var url, token string
	for _, kv := range f.env {
		if v, ok := strings.CutPrefix(kv, "LETHE_ADMIN_URL="); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(kv, "LETHE_ADMIN_TOKEN="); ok {
			token = v
		}
	}
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		name, value := line[:i], line[i+1:]
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(t, err, line)
		out[name] = v
	}
	return out
}

// A configured table renamed and re-created through the proxy leaves the
// follower's publication until its next refresh: the proxy's writes to the
// new table take intents meanwhile (capture.intents: auto), so none is
// missing from the ledger, although the stream does not carry them.
func TestWAL_TableRecreatedThroughTheProxyLosesNoRow(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "wal_recreated", "id text PRIMARY KEY, user_id text")
	t.Cleanup(func() {
		conn := connect(t, db.URL(db.Addr(), ""))
		_, _ = conn.Exec(context.Background(), `DROP TABLE IF EXISTS wal_recreated_old`)
	})
	f := newForgetBinary(t, db, `    - {table: public.wal_recreated, id: id, subjects: [user_id]}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	require.Eventually(t, func() bool { return f.metrics(t)["lethe_capture_followed_tables"] == 1 }, 30*time.Second, 20*time.Millisecond)

	_, err := app.Exec(ctx, `ALTER TABLE wal_recreated RENAME TO wal_recreated_old; CREATE TABLE wal_recreated (id text PRIMARY KEY, user_id text)`)
	require.NoError(t, err)
	const rows = 20
	for i := range rows {
		_, err := app.Exec(ctx, `INSERT INTO wal_recreated (id, user_id) VALUES ($1, 'nina')`, fmt.Sprint(i))
		require.NoError(t, err)
	}
	metrics := f.metrics(t)
	require.Positive(t, metrics["lethe_capture_intents_total"], "writes right after the DDL take intents")

	out, err := f.cli(t, "nina\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Layers []struct {
			LedgerRecords int `json:"ledger_records"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
	require.Len(t, pv.Layers, 1, out)
	assert.Equal(t, rows, pv.Layers[0].LedgerRecords, "every row written after the DDL is in the ledger: %s", out)
}

// walProxyBinary builds lethe-proxy and writes its config: a proxy on a
// free port before db, following table (id "id", subject "user_id") with
// the WAL follower into an SQLite ledger beside the config, under a slot
// of its own. It sets the store's password and the test salt.
func walProxyBinary(t *testing.T, db testDB, table string) (bin, cfg, addr, slot string) {
	t.Helper()
	bin = buildProxy(t)
	addr = freePort(t)
	slot = walSlot(t, db)
	cfg = filepath.Join(t.TempDir(), "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: %s
capture:
  ledger: {sqlite: ledger.db}
  store: "host=%s port=%s user=%s dbname=%s sslmode=disable"
  wal_slot: %s
  tables:
    - {table: %s, id: id, subjects: [user_id]}
log: {level: info}
`, addr, db.Addr(), db.Host, db.Port, db.User, db.DB, slot, table)), 0o600))
	t.Setenv("PGPASSWORD", db.Password)
	t.Setenv("LETHE_SUBJECT_SALT", fmt.Sprintf("%x", testSalt))
	return bin, cfg, addr, slot
}
