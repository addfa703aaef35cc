package ledger

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgMarkUnlessConfirmedSince is sqliteMarkUnlessConfirmedSince.
const pgMarkUnlessConfirmedSince = `
UPDATE ledger.entries SET state = 'deleted', updated_at = $1
WHERE store = $2 AND tbl = $3 AND record_id = ANY($4) AND state = 'confirmed'
	AND record_id NOT IN (
		SELECT record_id FROM ledger.entries
		WHERE store = $2 AND tbl = $3 AND record_id = ANY($4) AND state = 'confirmed' AND updated_at >= $5)
RETURNING record_id`

// pgPresentRecords is one page of PresentRecords.
const pgPresentRecords = `
SELECT DISTINCT record_id FROM ledger.entries
WHERE store = $1 AND tbl = $2 AND record_id > $3 AND state = 'confirmed' AND NOT unattributed
ORDER BY record_id LIMIT $4`

func (l *Postgres) queueMarkDeletedUnlessConfirmedSince(b *pgx.Batch, now time.Time, r *request) {
	// Microseconds, as the committer's times: a confirmation in the same
	// microsecond as since counts as since.
	since := r.since.UTC().Truncate(time.Microsecond)
	b.Queue(l.q(pgMarkUnlessConfirmedSince), now, string(r.store), r.table, r.recordIDs, since)
}

// readMarked reads the ids opMarkDeletedUnlessConfirmedSince marked.
func readMarked(res pgx.BatchResults, r *request) error {
	rows, err := res.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	r.marked, err = distinctIDs(rows)
	return err
}

// PresentRecords implements Settler.
func (l *Postgres) PresentRecords(ctx context.Context, store Store, table, after string, limit int) ([]string, error) {
	if err := validPage(store, table, limit); err != nil {
		return nil, err
	}
	rows, err := l.pool.Query(ctx, l.q(pgPresentRecords), string(store), table, after, limit)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, id)
	}
	return out, unavailable(rows.Err())
}
