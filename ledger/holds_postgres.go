package ledger

import "context"

// Holds implements Holder in one query over the entries as arrays.
func (l *Postgres) Holds(ctx context.Context, entries []Entry) ([]bool, error) {
	if err := validHoldsEntries(entries); err != nil {
		return nil, err
	}
	out := make([]bool, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	stores := make([]string, len(entries))
	tables := make([]string, len(entries))
	ids := make([]string, len(entries))
	subjects := make([][]byte, len(entries))
	for i, e := range entries {
		stores[i], tables[i], ids[i], subjects[i] = string(e.Store), e.Table, e.RecordID, e.Subject[:]
	}
	rows, err := l.pool.Query(ctx, l.q(`
		SELECT f.i - 1 FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[])
			WITH ORDINALITY AS f (store, tbl, record_id, subject, i)
		WHERE EXISTS (
			SELECT 1 FROM ledger.entries e
			WHERE e.store = f.store AND e.tbl = f.tbl AND e.record_id = f.record_id
				AND e.subject = f.subject AND NOT e.unattributed AND e.state = 'confirmed')`),
		stores, tables, ids, subjects)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			return nil, unavailable(err)
		}
		out[i] = true
	}
	return out, unavailable(rows.Err())
}
