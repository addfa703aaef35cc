package ledger

import (
	"context"
	"slices"
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

// pgObserveWrites writes a run of observed writes, given as arrays of
// stores, tables, record ids and subjects, in one statement. DISTINCT ON:
// a run may name a record and subject twice, and ON CONFLICT may not
// touch a row twice in one statement; the twice-named rows are equal.
// A record the ledger has is confirmed again and keeps the intent that
// last confirmed it.
const pgObserveWrites = `
INSERT INTO ledger.entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
SELECT DISTINCT ON (store, tbl, record_id, subject)
	store, tbl, record_id, subject, false, 'confirmed', 0, $5
FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) AS u (store, tbl, record_id, subject)
ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
	state = 'confirmed', updated_at = excluded.updated_at`

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
	err := observedRuns(changes, func(run []Entry) error {
		stores, tables, ids, subjects := make([]string, len(run)), make([]string, len(run)), make([]string, len(run)), make([][]byte, len(run))
		// The batch is encoded when sent, after observedRuns has reused
		// run: the subjects are copied out of it.
		hashes := make([]SubjectHash, len(run))
		for i := range run {
			e := &run[i]
			hashes[i] = e.Subject
			stores[i], tables[i], ids[i], subjects[i] = string(e.Store), e.Table, e.RecordID, hashes[i][:]
		}
		b.Queue(l.q(pgObserveWrites), stores, tables, ids, subjects, now)
		return nil
	}, func(store Store, table string, ids []string) error {
		// Copied for the same reason: observedRuns reuses ids.
		b.Queue(l.q(pgMarkDeleted), now, string(store), table, slices.Clone(ids))
		return nil
	}, func(c Change) error {
		b.Queue(l.q(pgMarkTableDeleted), now, string(c.Store), c.Table)
		return nil
	})
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
	return unavailable(err)
}
