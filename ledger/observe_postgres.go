package ledger

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Observe implements Observer in one transaction, committed with
// synchronous_commit on (the pool's setting).
func (l *Postgres) Observe(ctx context.Context, changes []Change) error {
	return l.observe(ctx, changes, true)
}

// ObserveNoSync implements Observer in one transaction committed with
// synchronous_commit off: the server returns before its WAL is flushed.
// A later commit with synchronous_commit on waits for the WAL to be
// flushed up to its own commit record, which lies past this one.
func (l *Postgres) ObserveNoSync(ctx context.Context, changes []Change) error {
	return l.observe(ctx, changes, false)
}

func (l *Postgres) observe(ctx context.Context, changes []Change, durable bool) error {
	if err := validChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	now := time.Now()
	b := &pgx.Batch{}
	if !durable {
		b.Queue("SET LOCAL synchronous_commit = off")
	}
	for _, c := range changes {
		switch c.Kind {
		case ChangeWrite:
			for _, s := range c.Subjects {
				b.Queue(l.q(`
					INSERT INTO ledger.entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
					VALUES ($1, $2, $3, $4, false, 'confirmed', 0, $5)
					ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
						state = 'confirmed', updated_at = excluded.updated_at`),
					string(c.Store), c.Table, c.RecordID, s[:], now)
			}
		case ChangeDelete:
			b.Queue(l.q(`UPDATE ledger.entries SET state = 'deleted', updated_at = $1
				WHERE store = $2 AND tbl = $3 AND record_id = $4 AND state <> 'deleted'`), now, string(c.Store), c.Table, c.RecordID)
		case ChangeTruncate:
			b.Queue(l.q(`UPDATE ledger.entries SET state = 'deleted', updated_at = $1
				WHERE store = $2 AND tbl = $3 AND state <> 'deleted'`), now, string(c.Store), c.Table)
		}
	}
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
	return unavailable(err)
}
