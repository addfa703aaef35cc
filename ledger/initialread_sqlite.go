package ledger

import (
	"context"
	"database/sql"
	"time"
)

// InitialReadDone implements InitialReads on the read pool.
func (l *SQLite) InitialReadDone(ctx context.Context, key SlotKey) (bool, error) {
	var done bool
	err := l.readers.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM initial_reads WHERE system_id = ? AND database = ? AND slot = ?)`,
		key.System, key.Database, key.Slot).Scan(&done)
	if err != nil {
		return false, unavailable(err)
	}
	return done, nil
}

// MarkInitialRead implements InitialReads in one durable transaction of
// the writer.
func (l *SQLite) MarkInitialRead(ctx context.Context, key SlotKey) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO initial_reads (system_id, database, slot, done_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (system_id, database, slot) DO UPDATE SET done_at = excluded.done_at`,
			key.System, key.Database, key.Slot, time.Now().UnixMicro())
		return unavailable(err)
	})
}

// ClearInitialRead implements InitialReads in one durable transaction of
// the writer.
func (l *SQLite) ClearInitialRead(ctx context.Context, key SlotKey) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM initial_reads WHERE system_id = ? AND database = ? AND slot = ?`,
			key.System, key.Database, key.Slot)
		return unavailable(err)
	})
}
