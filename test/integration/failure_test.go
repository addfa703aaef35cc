//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

func TestCancel_ReachesTheRightBackend(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	victim := connect(t, db.URL(p.Addr, ""))
	bystander := connect(t, db.URL(p.Addr, ""))

	// The bystander runs its own sleep: a cancel forwarded to the wrong
	// backend would end it instead.
	bystanderDone := make(chan error, 1)
	go func() {
		_, err := bystander.Exec(context.Background(), "SELECT pg_sleep(1.5)")
		bystanderDone <- err
	}()

	errc := make(chan error, 1)
	go func() {
		_, err := victim.Exec(context.Background(), "SELECT pg_sleep(30)")
		errc <- err
	}()
	waitForActivity(t, db, "SELECT pg_sleep(30)")
	require.NoError(t, victim.PgConn().CancelRequest(ctxT(t)))
	select {
	case err := <-errc:
		require.Error(t, err)
		assert.Equal(t, "57014", pgCode(err), "query_canceled")
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not reach the backend running pg_sleep(30)")
	}
	require.NoError(t, <-bystanderDone, "the other session's statement must not be cancelled")
	require.NoError(t, victim.Ping(ctxT(t)), "a cancelled session stays usable")

	// pgx cancels on context expiry the same way (and then drops its
	// connection); the backend must stop sleeping, which only a forwarded
	// CancelRequest achieves: a closed socket goes unnoticed during pg_sleep.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := victim.Exec(ctx, "SELECT pg_sleep(29)")
	require.Error(t, err)
	waitForNoActivity(t, db, "SELECT pg_sleep(29)")
}

// waitForNoActivity polls until no session runs query any more.
func waitForNoActivity(t *testing.T, db testDB, query string) {
	direct := connect(t, db.URL(db.Addr(), ""))
	for range 200 {
		var n int
		require.NoError(t, direct.QueryRow(ctxT(t), "SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'", query).Scan(&n))
		if n == 0 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("a session still runs %q", query)
}

// waitForActivity polls pg_stat_activity (directly on the server) until a
// session runs query.
func waitForActivity(t *testing.T, db testDB, query string) {
	direct := connect(t, db.URL(db.Addr(), ""))
	for range 200 {
		var n int
		require.NoError(t, direct.QueryRow(ctxT(t), "SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'", query).Scan(&n))
		if n > 0 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no session started %q", query)
}

func TestMaxMessageSize_ClosesOnlyTheOffendingConnection(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, func(s *pgwire.Server) { s.MaxMessageSize = 64 << 10 })
	other := connect(t, db.URL(p.Addr, ""))
	_, err := other.Exec(ctxT(t), "BEGIN")
	require.NoError(t, err)

	big := connect(t, db.URL(p.Addr, "default_query_exec_mode=simple_protocol"))
	var n int
	err = big.QueryRow(ctxT(t), "SELECT length('"+strings.Repeat("a", 100<<10)+"')").Scan(&n)
	require.Error(t, err)
	assert.Equal(t, "54000", pgCode(err))
	assert.Contains(t, pgMessage(err), "exceeds max_message_size")
	assert.True(t, big.IsClosed() || big.Ping(ctxT(t)) != nil, "the offending connection is closed")

	// The connection in the middle of a transaction carries on.
	require.NoError(t, other.QueryRow(ctxT(t), "SELECT length('"+strings.Repeat("a", 1000)+"')").Scan(&n))
	assert.Equal(t, 1000, n)
	_, err = other.Exec(ctxT(t), "COMMIT")
	require.NoError(t, err)
	// And new connections are served.
	require.NoError(t, connect(t, db.URL(p.Addr, "")).Ping(ctxT(t)))
}

func TestWrongPassword_ServerErrorReachesClient(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	bad := db
	bad.Password = "not-the-password"
	_, err := tryConnect(t, bad.URL(p.Addr, ""))
	require.Error(t, err)
	assert.Equal(t, "28P01", pgCode(err))
	assert.Contains(t, pgMessage(err), `password authentication failed for user "lethe"`)
}

// privateCluster starts a second throwaway cluster for tests that stop or
// restart the server, so that they cannot disturb other tests. It sits
// beside the test cluster (its directory with -private, its port from
// privatePort), so that suites running from several checkouts at once,
// each with a test cluster of its own, do not share it either.
func privateCluster(t *testing.T) testDB {
	t.Helper()
	shared := loadTestDB(t)
	base := os.Getenv("LETHE_TESTDB_DIR")
	if base == "" {
		base = "/tmp/lethe-testdb"
	}
	sharedPort, err := strconv.Atoi(shared.Port)
	require.NoError(t, err)
	dir, port := base+"-private", strconv.Itoa(privatePort(sharedPort))
	script := func(cmd string) string {
		// Output goes to a file, not a pipe: the server the script starts
		// inherits it and would keep a pipe open for the whole test.
		f, err := os.CreateTemp(t.TempDir(), "testdb")
		require.NoError(t, err)
		defer f.Close()
		c := exec.Command("../../scripts/testdb.sh", cmd)
		c.Env = append(os.Environ(), "LETHE_TESTDB_DIR="+dir, "LETHE_TESTDB_PORT="+port)
		c.Stdout, c.Stderr = f, f
		err = c.Run()
		out, _ := os.ReadFile(f.Name())
		require.NoError(t, err, "testdb.sh %s: %s", cmd, out)
		return string(out)
	}
	script("start")
	t.Cleanup(func() { script("stop") })
	vars := map[string]string{}
	for _, line := range strings.Split(script("env"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			vars[k] = strings.Trim(v, `"'`)
		}
	}
	db := testDBFrom(func(k string) string { return vars[k] })
	require.Equal(t, port, db.Port)
	return db
}

// pgctl runs pg_ctl on a cluster as the postgres OS user.
func pgctl(t *testing.T, db testDB, args ...string) {
	t.Helper()
	full := append([]string{"-u", "postgres", "--", db.Bin + "/pg_ctl", "-D", db.Data, "-w", "-t", "60"}, args...)
	out, err := exec.Command("runuser", full...).CombinedOutput()
	require.NoError(t, err, "pg_ctl %v: %s", args, out)
}

func TestUpstream_DownThenBackAndRestartedMidSession(t *testing.T) {
	db := privateCluster(t)
	p := startProxy(t, db, nil)
	conn := connect(t, db.URL(p.Addr, ""))
	require.NoError(t, conn.Ping(ctxT(t)))

	pgctl(t, db, "stop", "-m", "fast")
	// The session in progress learns that its server went away.
	err := conn.Ping(ctxT(t))
	require.Error(t, err)
	// New clients get a clear error while the server is down...
	_, err = tryConnect(t, db.URL(p.Addr, "connect_timeout=5"))
	require.Error(t, err)
	assert.Equal(t, "08006", pgCode(err))
	assert.Contains(t, pgMessage(err), "cannot connect to the upstream PostgreSQL server")

	pgctl(t, db, "start", "-l", db.Data+"/../log/postgres.log")
	// ...and are served again once it is back, by the same proxy.
	again := connect(t, db.URL(p.Addr, ""))
	require.NoError(t, again.Ping(ctxT(t)))

	// A restart in the middle of a session: the client gets an error, not a hang.
	pgctl(t, db, "restart", "-m", "fast", "-l", db.Data+"/../log/postgres.log")
	err = again.Ping(ctxT(t))
	require.Error(t, err)
	require.NoError(t, connect(t, db.URL(p.Addr, "")).Ping(ctxT(t)))
}

func TestShutdown_DrainsIdleSessionsAndLetsTransactionsFinish(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	idle := connect(t, db.URL(p.Addr, ""))
	busy := connect(t, db.URL(p.Addr, ""))
	require.NoError(t, idle.Ping(ctxT(t)))
	_, err := busy.Exec(ctxT(t), "BEGIN")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(ctx) }()

	// The idle session is ended with the admin-shutdown SQLSTATE...
	var err2 error
	for range 100 {
		if err2 = idle.Ping(ctxT(t)); err2 != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Error(t, err2)
	// ...while the open transaction may finish its work and commit.
	var one int
	require.NoError(t, busy.QueryRow(ctxT(t), "SELECT 1").Scan(&one))
	_, err = busy.Exec(ctxT(t), "COMMIT")
	require.NoError(t, err)
	select {
	case err := <-shut:
		require.NoError(t, err, "Shutdown returns once every session is gone")
	case <-time.After(15 * time.Second):
		t.Fatal("Shutdown did not finish after the last transaction ended")
	}
	_, err = tryConnect(t, db.URL(p.Addr, "connect_timeout=2"))
	require.Error(t, err, "no new sessions after shutdown")
}

// privatePort is the private cluster's port: the test cluster's plus 100,
// moved below the kernel's range of local ports for outgoing connections
// when it falls in it. A connection any test holds may have been given
// that port as its own end, for as long as it lives, and the restarts the
// private cluster's tests make would then fail to bind it.
func privatePort(shared int) int {
	p := shared + 100
	lo, hi := 32768, 60999 // Linux's default range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if l, err := strconv.Atoi(f[0]); err == nil {
				lo = l
			}
			if h, err := strconv.Atoi(f[1]); err == nil {
				hi = h
			}
		}
	}
	if p >= lo && p <= hi && p-25000 > 1024 && p-25000 < lo {
		p -= 25000
	}
	return p
}
