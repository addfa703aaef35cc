package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The WAL follower's changes reach entries in two steps. At each commit
// SQLite writes every page the transaction changed into its WAL, and one
// of the follower's batches (every 200 ms while rows stream) names
// subjects at random, each in a page of entries_subject of its own: a
// page written per row, again at every batch. So Observe appends its
// changes as one row of observed (encodeChanges), a few pages in
// sequence, and drainObserved later writes every waiting row into
// entries, in order, in the transaction that deletes them: each page of
// the index is written once for all the changes that waited.
//
// A drain runs, in the same transaction, before any other write of
// entries (a batch of decisions; an Observe when one is due) and before
// any read of it (BySubject, Counts, Holds). To every caller the ledger
// is as if each Observe had written entries at once.
const (
	// drainChanges and drainAge bound the waiting changes: an Observe
	// drains them when its own would take them past drainChanges, or when
	// the oldest has waited drainAge. A drain holds the writer, and every
	// later batch of the follower waits for it, so it is kept to a few
	// hundred milliseconds: the more changes a drain takes, the fewer
	// pages it writes per change, and the longer it holds the writer.
	drainChanges = 10000
	drainAge     = 2 * time.Second
)

// observedLog is what waits in observed.
type observedLog struct {
	maxChanges int64         // drainChanges; smaller in tests
	maxAge     time.Duration // drainAge

	// mu is held across every transaction that appends to observed or
	// drains it, before the writer connection is taken, and while changes
	// and since are set after it commits.
	mu      sync.Mutex
	changes atomic.Int64 // waiting; readers look without mu
	since   time.Time    // when the oldest waiting row was appended
}

// due reports whether an Observe of n changes at now drains first.
func (o *observedLog) due(n int, now time.Time) bool {
	waiting := o.changes.Load()
	return waiting > 0 && (waiting+int64(n) > o.maxChanges || now.Sub(o.since) >= o.maxAge)
}

func (o *observedLog) appended(n int, at time.Time) {
	if o.changes.Add(int64(n)) == int64(n) {
		o.since = at
	}
}

func (o *observedLog) drained() { o.changes.Store(0) }

// loadObserved reads what waits in observed, at open.
func (l *SQLite) loadObserved() error {
	var n, since int64
	if err := l.writer.QueryRow(`SELECT coalesce(sum(n), 0), coalesce(min(at), 0) FROM observed`).Scan(&n, &since); err != nil {
		return err
	}
	l.observed.maxChanges, l.observed.maxAge = drainChanges, drainAge
	l.observed.changes.Store(n)
	l.observed.since = time.UnixMicro(since)
	return nil
}

// observe appends changes to observed, or, when a drain is due, drains and
// writes them into entries.
func (l *SQLite) observe(ctx context.Context, changes []Change, inTx func(context.Context, func(*sql.Tx) error) error) error {
	if err := validChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	l.observed.mu.Lock()
	defer l.observed.mu.Unlock()
	now := time.Now()
	ts := now.UnixMicro()
	drain := l.observed.due(len(changes), now)
	err := inTx(ctx, func(tx *sql.Tx) error {
		if !drain {
			_, err := tx.StmtContext(ctx, l.stmts["observed_append"]).ExecContext(ctx, ts, len(changes), encodeChanges(changes))
			return unavailable(err)
		}
		if err := l.drainObserved(ctx, tx); err != nil {
			return err
		}
		return unavailable(l.writeChanges(ctx, tx, changes, ts))
	})
	if err != nil {
		return err
	}
	if drain {
		l.observed.drained()
	} else {
		l.observed.appended(len(changes), now)
	}
	return nil
}

// syncObserved drains observed, if anything waits there, before a read of
// entries. The drain commits without a fsync: were it lost, the rows it
// deleted would be back with it.
func (l *SQLite) syncObserved(ctx context.Context) error {
	if l.observed.changes.Load() == 0 {
		return nil
	}
	l.observed.mu.Lock()
	defer l.observed.mu.Unlock()
	if l.observed.changes.Load() == 0 {
		return nil
	}
	if err := l.noSyncTx(ctx, func(tx *sql.Tx) error { return l.drainObserved(ctx, tx) }); err != nil {
		return err
	}
	l.observed.drained()
	return nil
}

// drainObserved writes every row of observed into entries, in the order
// they were appended, each with its own time, and deletes them, inside tx.
// The caller holds l.obs.mu, and marks the log drained once tx commits.
func (l *SQLite) drainObserved(ctx context.Context, tx *sql.Tx) error {
	type waiting struct {
		at   int64
		blob []byte
	}
	rows, err := tx.StmtContext(ctx, l.stmts["observed_all"]).QueryContext(ctx)
	if err != nil {
		return unavailable(err)
	}
	var all []waiting
	for rows.Next() {
		var w waiting
		if err := rows.Scan(&w.at, &w.blob); err != nil {
			rows.Close()
			return unavailable(err)
		}
		all = append(all, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	for i, w := range all {
		changes, err := decodeChanges(w.blob)
		if err != nil {
			return fmt.Errorf("ledger: observed changes appended at %s: %w", time.UnixMicro(w.at).UTC(), err)
		}
		if err := l.writeChanges(ctx, tx, changes, w.at); err != nil {
			return unavailable(err)
		}
		all[i].blob = nil
	}
	_, err = tx.StmtContext(ctx, l.stmts["observed_clear"]).ExecContext(ctx)
	return unavailable(err)
}

// writeChanges writes changes into entries, inside tx: each run of writes
// between two deletes or truncates as one confirmation of intent 0
// (confirmEntries), and each run of deletes of one table as one
// MarkDeleted does.
func (l *SQLite) writeChanges(ctx context.Context, tx *sql.Tx, changes []Change, ts int64) error {
	return observedRuns(changes, func(run []Entry) error {
		return l.confirmEntries(ctx, tx, run, 0, ts)
	}, func(store Store, table string, ids []string) error {
		return l.markDeleted(ctx, tx, ts, store, table, ids)
	}, func(c Change) error {
		_, err := tx.StmtContext(ctx, l.stmts["truncate_table"]).ExecContext(ctx, ts, string(c.Store), c.Table)
		return err
	})
}
