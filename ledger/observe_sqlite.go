package ledger

import (
	"context"
	"database/sql"
	"time"
)

// Observe implements Observer in one durable transaction of the writer.
func (l *SQLite) Observe(ctx context.Context, changes []Change) error {
	return l.observe(ctx, changes, l.durableTx)
}

// ObserveNoSync implements Observer in one transaction of the writer
// committed with synchronous=NORMAL: SQLite appends it to the WAL without
// an fsync. The next FULL commit on the writer (Observe's, forget's, the
// transparency log's) fsyncs the WAL file, and with it these frames,
// which lie before its own; a checkpoint fsyncs the WAL before it copies
// frames into the database.
func (l *SQLite) ObserveNoSync(ctx context.Context, changes []Change) error {
	return l.observe(ctx, changes, l.noSyncTx)
}

// observe writes each run of writes between two deletes or truncates as
// one confirmation of intent 0 (confirmEntries), and each run of deletes
// of one table as one MarkDeleted does.
func (l *SQLite) observe(ctx context.Context, changes []Change, inTx func(context.Context, func(*sql.Tx) error) error) error {
	if err := validChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	ts := time.Now().UnixMicro()
	return inTx(ctx, func(tx *sql.Tx) error {
		return unavailable(observedRuns(changes, func(run []Entry) error {
			return l.confirmEntries(ctx, tx, run, 0, ts)
		}, func(store Store, table string, ids []string) error {
			return l.markDeleted(ctx, tx, ts, store, table, ids)
		}, func(c Change) error {
			_, err := tx.ExecContext(ctx, `UPDATE entries SET state = 'deleted', updated_at = ?
				WHERE store = ? AND tbl = ? AND state <> 'deleted'`, ts, string(c.Store), c.Table)
			return err
		}))
	})
}

// noSyncTx runs fn in one transaction on the writer connection, committed
// with synchronous=NORMAL (relaxedSync); the writer is FULL again
// afterwards for the durable writers that share it.
func (l *SQLite) noSyncTx(ctx context.Context, fn func(*sql.Tx) error) error {
	conn, err := l.w.Conn(ctx)
	if err != nil {
		return unavailable(err)
	}
	defer conn.Close()
	restore, err := relaxedSync(ctx, conn)
	if err != nil {
		return unavailable(err)
	}
	defer restore()
	return inTx(ctx, conn, fn)
}
