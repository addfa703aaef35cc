package ledger

import (
	"context"
	"database/sql"
	"time"
)

// Observe implements Observer in one durable transaction of the writer.
func (l *SQLite) Observe(ctx context.Context, changes []Change) error {
	if err := validChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	ts := time.Now().UnixMicro()
	return l.durableTx(ctx, func(tx *sql.Tx) error {
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
