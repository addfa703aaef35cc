package ledger

import "context"

// InitialReadDone implements InitialReads.
func (l *Postgres) InitialReadDone(ctx context.Context, key SlotKey) (bool, error) {
	var done bool
	err := l.pool.QueryRow(ctx, l.q(`SELECT EXISTS (SELECT 1 FROM ledger.initial_reads WHERE system_id = $1 AND database = $2 AND slot = $3)`),
		key.System, key.Database, key.Slot).Scan(&done)
	if err != nil {
		return false, unavailable(err)
	}
	return done, nil
}

// MarkInitialRead implements InitialReads in one transaction committed
// with synchronous_commit on (the pool's setting).
func (l *Postgres) MarkInitialRead(ctx context.Context, key SlotKey) error {
	_, err := l.pool.Exec(ctx, l.q(`INSERT INTO ledger.initial_reads (system_id, database, slot, done_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (system_id, database, slot) DO UPDATE SET done_at = excluded.done_at`),
		key.System, key.Database, key.Slot)
	return unavailable(err)
}

// ClearInitialRead implements InitialReads like MarkInitialRead.
func (l *Postgres) ClearInitialRead(ctx context.Context, key SlotKey) error {
	_, err := l.pool.Exec(ctx, l.q(`DELETE FROM ledger.initial_reads WHERE system_id = $1 AND database = $2 AND slot = $3`),
		key.System, key.Database, key.Slot)
	return unavailable(err)
}
