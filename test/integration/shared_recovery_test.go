//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// sharedLease is short so that a dead proxy's intents become orphans
// within the test.
var sharedLease = ledger.Options{LeaseDuration: 2 * time.Second, RenewInterval: 200 * time.Millisecond, CommitTimeout: 2 * time.Second}

// startSharedCaptureProxy is startCaptureProxy over a PostgreSQL ledger in
// schema, reached at ledgerAddr, under the owner name owner.
func startSharedCaptureProxy(t *testing.T, db testDB, rules []extract.Rule, ledgerAddr, schema, owner string) *captured {
	t.Helper()
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	opts := sharedLease
	opts.Schema, opts.Owner = schema, owner
	opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil)).With("proxy", owner)
	l, err := ledger.OpenPostgres(context.Background(), db.DSN(ledgerAddr, "sslmode=disable"), opts)
	require.NoError(t, err)
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	c := capture.New(capture.Config{Rules: compiled, Ledger: l, Hasher: h, Mode: capture.Strict, Logger: opts.Logger, ConfirmHold: testConfirmHold})
	t.Cleanup(func() { c.Close(); l.Close() })
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer = pgcapture.New(c, pgcapture.Config{}) })
	return &captured{proxy: p, capture: c, ledger: l, hasher: h}
}

// recordStates maps each record id of subject in table to its best state.
func recordStates(t *testing.T, l ledger.Ledger, h *ledger.Hasher, table, subject string) map[string]ledger.State {
	t.Helper()
	recs, err := l.BySubject(context.Background(), h.Hash(subject))
	require.NoError(t, err)
	out := map[string]ledger.State{}
	for _, r := range recs {
		if r.Table == table && out[r.RecordID] != ledger.StateConfirmed {
			out[r.RecordID] = r.State
		}
	}
	return out
}

// TestRecovery_SurvivorResolvesADeadProxysIntents runs two capturing
// proxies on one PostgreSQL ledger. While proxy A lives, the recovery that
// B runs every 100ms leaves A's open transactions alone. Then A loses the
// ledger (the link is cut, as when its host dies) with one transaction
// committed but not confirmed and one rolled back but not dropped; once
// A's lease expires, B's recovery confirms the first and drops the second
// by asking the database, and leaves its own open transaction alone.
func TestRecovery_SurvivorResolvesADeadProxysIntents(t *testing.T) {
	db := loadTestDB(t)
	const table = "public.cap_shared"
	rules := docsTable(t, db, "cap_shared")
	var b [4]byte
	rand.Read(b[:])
	schema := "lethe_ledger_shared_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		connect(t, db.URL(db.Addr(), "")).Exec(context.Background(), `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
	})

	link := startLink(t, db.Addr()) // A's only way to its ledger
	a := startSharedCaptureProxy(t, db, rules, link.addr, schema, "proxy-a")
	s := startSharedCaptureProxy(t, db, rules, db.Addr(), schema, "proxy-b")

	store, err := pgstore.Open(ctxT(t), db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	rctx, stopRecovery := context.WithCancel(context.Background())
	recovered := make(chan struct{})
	go func() {
		defer close(recovered)
		capture.RecoverEvery(rctx, 100*time.Millisecond, s.ledger, map[string]string{table: "id"}, store,
			slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("proxy", "proxy-b"))
	}()
	t.Cleanup(func() { stopRecovery(); <-recovered; store.Close() })

	ctx := ctxT(t)
	insert := func(conn *pgx.Conn, id string) pgx.Tx {
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "INSERT INTO cap_shared (id, user_id) VALUES ($1, 'ann')", id)
		require.NoError(t, err)
		return tx
	}
	ledgerState := func(id string) ledger.State { return recordStates(t, s.ledger, s.hasher, table, "ann")[id] }

	// A live proxy's open transaction outlasts a lease and many recovery
	// runs of B.
	long := insert(connect(t, db.URL(a.Addr, "")), "a0")
	time.Sleep(sharedLease.LeaseDuration * 3 / 2) // longer than a lease: renewals keep A alive
	require.NoError(t, long.Commit(ctx))
	require.Eventually(t, func() bool { return ledgerState("a0") == ledger.StateConfirmed }, 5*time.Second, 20*time.Millisecond,
		"B's recovery did not touch A's in-flight intent, so A confirmed it")

	// A dies between forwarding and deciding.
	committed := insert(connect(t, db.URL(a.Addr, "")), "a1")
	rolledBack := insert(connect(t, db.URL(a.Addr, "")), "a2")
	ownOpen := insert(connect(t, db.URL(s.Addr, "")), "b1") // B's own, in flight throughout
	link.cut()
	require.NoError(t, committed.Commit(ctx))
	require.NoError(t, rolledBack.Rollback(ctx))
	_, err = connect(t, db.URL(a.Addr, "")).Exec(ctx, "INSERT INTO cap_shared (id, user_id) VALUES ('a3', 'ann')")
	require.Error(t, err, "A cannot record intents any more, so it refuses writes")
	assert.Equal(t, capture.CodeLedgerDown, pgCode(err))
	require.Equal(t, ledger.StatePending, ledgerState("a1"))
	require.Equal(t, ledger.StatePending, ledgerState("a2"))

	require.Eventually(t, func() bool {
		st := recordStates(t, s.ledger, s.hasher, table, "ann")
		_, a2 := st["a2"]
		return st["a1"] == ledger.StateConfirmed && !a2
	}, 15*time.Second, 50*time.Millisecond, "once A's lease expired, B confirmed a1 (in the table) and dropped a2 (not in it)")
	assert.Equal(t, ledger.StatePending, ledgerState("b1"), "B's own open transaction is not an orphan")
	require.NoError(t, ownOpen.Commit(ctx))
	require.Eventually(t, func() bool { return ledgerState("b1") == ledger.StateConfirmed }, 5*time.Second, 20*time.Millisecond)
	pending, err := s.ledger.Pending(ctx)
	require.NoError(t, err)
	assert.Empty(t, pending)
}

// link forwards TCP connections to a server until cut, which closes them
// all and refuses new ones: the network between a proxy and its ledger
// failing, or the proxy's host dying.
type link struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startLink(t *testing.T, backend string) *link {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &link{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(l.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			l.mu.Lock()
			l.conns = append(l.conns, c, s)
			l.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	return l
}

func (l *link) cut() {
	l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}
