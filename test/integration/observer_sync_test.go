//go:build integration

package integration

import (
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// syncRefuser refuses the Sync that follows a statement marked
// "refuse_at_sync", the way capture refuses a Sync whose write-ahead
// intent failed after the statement itself was forwarded. It says it will
// wait at every Sync, so the relay forwards what precedes it first.
type syncRefuser struct {
	mu    sync.Mutex
	armed bool
	waits int
}

func (o *syncRefuser) Open(pgwire.SessionInfo) pgwire.Session { return o }
func (o *syncRefuser) ServerMessage(pgwire.Message)           {}
func (o *syncRefuser) Close()                                 {}

func (o *syncRefuser) WillWait(typ byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if typ == 'S' {
		o.waits++
	}
	return typ == 'S'
}

func (o *syncRefuser) ClientMessage(m pgwire.Message) *pgwire.Refusal {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch m.Type {
	case 'P':
		p, err := m.Parse()
		if err == nil && strings.Contains(p.Query, "refuse_at_sync") {
			o.armed = true
		}
	case 'S':
		if o.armed {
			o.armed = false
			return &pgwire.Refusal{Code: "LT002", Message: "lethe: refused at Sync"}
		}
	}
	return nil
}

// TestObserver_RefusedSyncRollsBackWhatWasAlreadyForwarded: the INSERT
// reaches the server and runs, the refusal comes at its Sync, and the
// server rolls it back, in an implicit and in an explicit transaction; the
// connection stays usable.
func TestObserver_RefusedSyncRollsBackWhatWasAlreadyForwarded(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "obs_sync", "id int")
	obs := &syncRefuser{}
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer = obs })
	ctx := ctxT(t)
	conn := connect(t, db.URL(p.Addr, "sslmode=disable"))
	direct := connect(t, db.URL(db.Addr(), ""))
	count := func() int {
		var n int
		require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM obs_sync`).Scan(&n))
		return n
	}

	_, err := conn.Exec(ctx, `INSERT INTO obs_sync VALUES ($1) -- refuse_at_sync`, 1)
	require.Equal(t, "LT002", pgCode(err), "err: %v", err)
	require.Zero(t, count(), "the forwarded INSERT was rolled back")
	_, err = conn.Exec(ctx, `INSERT INTO obs_sync VALUES ($1)`, 2)
	require.NoError(t, err)
	require.Equal(t, 1, count())

	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO obs_sync VALUES ($1) -- refuse_at_sync`, 3)
	require.Equal(t, "LT002", pgCode(err), "err: %v", err)
	require.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxCommitRollback, "the error aborted the explicit transaction")
	require.Equal(t, 1, count())

	var one int
	require.NoError(t, conn.QueryRow(ctx, `SELECT 1`).Scan(&one))
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Positive(t, obs.waits, "the relay asked before each Sync")
}
