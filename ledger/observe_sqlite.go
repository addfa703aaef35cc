package ledger

import (
	"context"
	"database/sql"
)

// Observe implements Observer in one durable transaction of the writer
// (see sqlite_observed.go for where the changes go).
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

// noSyncTx runs fn in one transaction on the writer connection, committed
// with synchronous=NORMAL (relaxedSync); the writer is FULL again
// afterwards for the durable writers that share it.
func (l *SQLite) noSyncTx(ctx context.Context, fn func(*sql.Tx) error) error {
	conn, err := l.writer.Conn(ctx)
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
