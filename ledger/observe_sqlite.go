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

func (l *SQLite) observe(ctx context.Context, changes []Change, inTx func(context.Context, func(*sql.Tx) error) error) error {
	if err := validChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	ts := time.Now().UnixMicro()
	return inTx(ctx, func(tx *sql.Tx) error {
		write, err := tx.PrepareContext(ctx, `
			INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
			VALUES (?, ?, ?, ?, 0, 'confirmed', 0, ?)
			ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
				state = 'confirmed', updated_at = excluded.updated_at`)
		if err != nil {
			return unavailable(err)
		}
		defer write.Close()
		for _, c := range changes {
			switch c.Kind {
			case ChangeWrite:
				for _, s := range c.Subjects {
					if _, err := write.ExecContext(ctx, string(c.Store), c.Table, c.RecordID, s[:], ts); err != nil {
						return unavailable(err)
					}
				}
			case ChangeDelete:
				_, err = tx.ExecContext(ctx, `UPDATE entries SET state = 'deleted', updated_at = ?
					WHERE store = ? AND tbl = ? AND record_id = ? AND state <> 'deleted'`, ts, string(c.Store), c.Table, c.RecordID)
			case ChangeTruncate:
				_, err = tx.ExecContext(ctx, `UPDATE entries SET state = 'deleted', updated_at = ?
					WHERE store = ? AND tbl = ? AND state <> 'deleted'`, ts, string(c.Store), c.Table)
			}
			if err != nil {
				return unavailable(err)
			}
		}
		return nil
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
