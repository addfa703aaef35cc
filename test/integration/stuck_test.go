//go:build integration

package integration

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
)

// hijacked opens a session through addr as application name app and hands
// back its raw socket and frontend, for clients that do what no library
// does.
func hijacked(t *testing.T, db testDB, addr, app string) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	pc, err := pgconn.Connect(ctxT(t), db.DSN(addr, "sslmode=disable application_name="+app))
	require.NoError(t, err)
	hc, err := pc.Hijack()
	require.NoError(t, err)
	return hc.Conn, hc.Frontend
}

// waitNoBackend polls until the server has no session of application name
// app, failing after limit.
func waitNoBackend(t *testing.T, db testDB, app string, limit time.Duration) {
	t.Helper()
	direct := connect(t, db.URL(db.Addr(), ""))
	deadline := time.Now().Add(limit)
	for {
		var n int
		var state string
		err := direct.QueryRow(ctxT(t), "SELECT count(*), coalesce(max(wait_event), '') FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n, &state)
		require.NoError(t, err)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backend of %q is still there %v after its client left (wait event %q)", app, limit, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRelay_ClientThatNeverReadsThenLeavesFreesItsBackend: a client opens a
// transaction, pipelines queries with big results without reading any, and
// disconnects. The server blocks writing results the proxy cannot deliver;
// the proxy must close its upstream connection so that the backend (and
// its open transaction) goes away.
func TestRelay_ClientThatNeverReadsThenLeavesFreesItsBackend(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	for round := range 3 {
		app := fmt.Sprintf("lethe-stuck-%d-%d", time.Now().UnixNano(), round)
		conn, fe := hijacked(t, db, p.Addr, app)
		// Big queries with big results: once the server blocks writing
		// results, the proxy blocks writing it the next query.
		big := &pgproto3.Query{String: "SELECT '" + strings.Repeat("x", 1<<20) + "' FROM generate_series(1, 4)"}
		fe.Send(&pgproto3.Query{String: "BEGIN"})
		require.NoError(t, fe.Flush())
		sent := make(chan error, 1)
		go func() {
			for range 64 {
				fe.Send(big)
				if err := fe.Flush(); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		// Let the server fill every buffer on the way back.
		deadline := time.Now().Add(10 * time.Second)
		for backendWaits(t, db, app) != "ClientWrite" {
			if time.Now().After(deadline) {
				t.Fatal("the backend never blocked writing to the proxy")
			}
			time.Sleep(50 * time.Millisecond)
		}
		require.NoError(t, conn.Close())
		<-sent // fails or ends now that the socket is closed
		waitNoBackend(t, db, app, 10*time.Second)
	}
}

// backendWaits returns the wait event of application name app's backend.
func backendWaits(t *testing.T, db testDB, app string) string {
	direct := connect(t, db.URL(db.Addr(), ""))
	var ev string
	err := direct.QueryRow(ctxT(t), "SELECT coalesce(max(wait_event), '') FROM pg_stat_activity WHERE application_name = $1", app).Scan(&ev)
	require.NoError(t, err)
	return ev
}

// TestCapture_StatementsInFlightAreBounded: a client pipelines more
// writes than the session may have in flight, without a Sync, while the
// server is held on a lock of the table (so that none is answered, however
// fast or slow the machine). The write past the limit is refused with
// a clear error, the transaction aborts as a whole, nothing reaches the
// ledger as confirmed, and the connection stays usable.
func TestCapture_StatementsInFlightAreBounded(t *testing.T) {
	db := loadTestDB(t)
	const limit = 100
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "cap_flood"), func(cfg *pgcapture.Config) {
		cfg.MaxStatementsInFlight = limit
	})
	holder := connect(t, db.URL(db.Addr(), ""))
	lock, err := holder.Begin(ctxT(t))
	require.NoError(t, err)
	_, err = lock.Exec(ctxT(t), "LOCK TABLE cap_flood IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	conn, fe := hijacked(t, db, c.Addr, "lethe-flood")
	defer conn.Close()
	fe.Send(&pgproto3.Parse{Name: "ins", Query: "INSERT INTO cap_flood (id, user_id) VALUES ($1, $2)"})
	for i := range 3 * limit {
		fe.Send(&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte(fmt.Sprintf("f%d", i)), []byte("flood@example.com")}})
		fe.Send(&pgproto3.Execute{})
	}
	fe.Send(&pgproto3.Sync{})
	require.NoError(t, fe.Flush())
	for deadline := time.Now().Add(30 * time.Second); c.capture.Stats.Refused.Load() == 0; {
		require.True(t, time.Now().Before(deadline), "the proxy never refused the statement past the limit")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, lock.Rollback(ctxT(t)))

	var got *pgproto3.ErrorResponse
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		msg, err := fe.Receive()
		require.NoError(t, err)
		if e, ok := msg.(*pgproto3.ErrorResponse); ok && got == nil {
			cp := *e
			got = &cp
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.NotNil(t, got, "the flood must be refused")
	require.Equal(t, pgcapture.CodeTooManyInFlight, got.Code)
	require.Contains(t, got.Message, "statements in flight")
	// The server skips everything up to the Sync after the refusal: the
	// proxy neither refuses nor queues those statements again.
	require.EqualValues(t, 1, c.capture.Stats.Refused.Load())

	direct := connect(t, db.URL(db.Addr(), ""))
	var n int
	require.NoError(t, direct.QueryRow(ctxT(t), "SELECT count(*) FROM cap_flood").Scan(&n))
	require.Zero(t, n, "the refused pipeline's transaction must not commit")
	require.Empty(t, c.confirmed(t, "public.cap_flood", "flood@example.com"))

	// The session goes on.
	fe.Send(&pgproto3.Query{String: "INSERT INTO cap_flood (id, user_id) VALUES ('after', 'flood@example.com')"})
	require.NoError(t, fe.Flush())
	for {
		msg, err := fe.Receive()
		require.NoError(t, err)
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("the session must stay usable: %s %s", e.Code, e.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.Equal(t, []string{"after"}, c.confirmed(t, "public.cap_flood", "flood@example.com"))
}
