package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// following is a running WAL follower.
type following struct {
	follower *walfollow.Follower
	stop     func() // stops it and waits, before the ledger closes
}

// startFollowing prepares the server for the WAL follower and starts it.
// What an operator must change (wal_level, the role, a rule) stops the
// start with the fix in the message; a server that cannot be reached yet
// is retried in the background, as the relay itself would be.
func startFollowing(c config.Capture, rules *extract.Rules, l ledger.Ledger, hasher *ledger.Hasher, tombs *capture.Tombstones, log *slog.Logger) (*following, error) {
	observer, ok := l.(ledger.Observer)
	if !ok {
		return nil, errors.New("the ledger cannot take the WAL follower's changes")
	}
	f, err := walfollow.New(walfollow.Config{
		ConnString: c.Store, Name: c.WALSlot, Rules: rules, Ledger: observer, Hasher: hasher, Logger: log,
		Forgotten: tombs.Has,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = f.Prepare(ctx)
	cancel()
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr):
		log.Warn("wal: cannot reach the database yet; following starts once it can", "err", err)
	case err != nil:
		return nil, err
	default:
		log.Info("wal: following committed rows of the configured tables", "slot", c.WALSlot)
	}
	ctx, cancel = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.Run(ctx)
	}()
	return &following{follower: f, stop: func() { cancel(); wg.Wait() }}, nil
}

// walMetrics are the follower's series for the admin API's /metrics.
func walMetrics(f *walfollow.Follower, m map[string]float64) {
	st := &f.Stats
	following := 0.0
	if st.Following.Load() {
		following = 1
	}
	m["lethe_wal_following"] = following
	m["lethe_wal_rows_total"] = float64(st.Rows.Load())
	m["lethe_wal_changes_recorded_total"] = float64(st.Recorded.Load())
	m["lethe_wal_rows_without_id_total"] = float64(st.NoID.Load())
	m["lethe_wal_rows_unreadable_subject_total"] = float64(st.BadSubject.Load())
	m["lethe_wal_late_writes_total"] = float64(st.LateWrites.Load())
	m["lethe_wal_lag_bytes"] = float64(st.Lag())
}
