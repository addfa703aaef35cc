package ledger

import (
	"context"
	"time"
)

// register adds this handle to the owners table, first removing the rows
// of earlier handles that left no pending intent (their ids would never be
// looked up again). It runs at open, before the committer starts.
func (l *SQLite) register(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Pending intents are in the pending file (sqlite_pending.go), which
	// openPending has cleared of resolved ones.
	var owners []byte
	if err := l.pendingReaders.QueryRowContext(ctx, `SELECT json_group_array(DISTINCT owner_id) FROM pending WHERE owner_id IS NOT NULL`).Scan(&owners); err != nil {
		return err
	}
	tx, err := l.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM owners WHERE id NOT IN (SELECT value FROM json_each(?))`, string(owners)); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO owners (name, started_at) VALUES (?, ?)`, name, time.Now().UnixMicro())
	if err != nil {
		return err
	}
	if l.owner, err = res.LastInsertId(); err != nil {
		return err
	}
	return tx.Commit()
}

// unregister removes this handle's row at Close, so that what it left
// pending is an orphan. A failure only leaves the row behind, which the
// next open prunes.
func (l *SQLite) unregister() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.writer.ExecContext(ctx, `DELETE FROM owners WHERE id = ?`, l.owner); err != nil {
		l.log.Warn("ledger: could not remove this handle from the owners table", "owner_id", l.owner, "err", err)
	}
}
