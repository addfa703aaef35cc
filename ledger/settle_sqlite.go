package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
)

// sqliteMarkUnlessConfirmedSince marks the rows of the listed records
// deleted unless a row of the same record was confirmed at or after ?5,
// and returns the record id of each row marked.
const sqliteMarkUnlessConfirmedSince = `
	UPDATE entries SET state = 'deleted', updated_at = ?1
	WHERE store = ?2 AND tbl = ?3 AND record_id IN (SELECT value FROM json_each(?4)) AND state = 'confirmed'
		AND record_id NOT IN (
			SELECT record_id FROM entries
			WHERE store = ?2 AND tbl = ?3 AND record_id IN (SELECT value FROM json_each(?4))
				AND state = 'confirmed' AND updated_at >= ?5)
	RETURNING record_id`

// sqlitePresentRecords is one page of PresentRecords.
const sqlitePresentRecords = `
	SELECT DISTINCT record_id FROM entries
	WHERE store = ?1 AND tbl = ?2 AND record_id > ?3 AND state = 'confirmed' AND unattributed = 0
	ORDER BY record_id LIMIT ?4`

// markDeletedUnlessConfirmedSince runs r inside the decisions' tx.
func (l *SQLite) markDeletedUnlessConfirmedSince(ctx context.Context, tx *sql.Tx, ts int64, r *request) error {
	ids, err := json.Marshal(r.recordIDs)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, sqliteMarkUnlessConfirmedSince, ts, string(r.store), r.table, string(ids), r.since.UnixMicro())
	if err != nil {
		return err
	}
	defer rows.Close()
	r.marked, err = distinctIDs(rows)
	return err
}

// PresentRecords implements Settler on the read pool, once the WAL
// follower's waiting changes are in entries.
func (l *SQLite) PresentRecords(ctx context.Context, store Store, table, after string, limit int) ([]string, error) {
	if err := validPage(store, table, limit); err != nil {
		return nil, err
	}
	if err := l.syncObserved(ctx); err != nil {
		return nil, err
	}
	rows, err := l.readers.QueryContext(ctx, sqlitePresentRecords, string(store), table, after, limit)
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
