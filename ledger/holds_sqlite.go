package ledger

import "context"

// Holds implements Holder with one statement over the entries as a JSON
// array, read on the read pool.
func (l *SQLite) Holds(ctx context.Context, entries []Entry) ([]bool, error) {
	if err := validHoldsEntries(entries); err != nil {
		return nil, err
	}
	out := make([]bool, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	if err := l.syncObserved(ctx); err != nil {
		return nil, err
	}
	rows, err := l.stmts["holds"].QueryContext(ctx, entriesJSON(entries))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, unavailable(err)
		}
		out[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}
