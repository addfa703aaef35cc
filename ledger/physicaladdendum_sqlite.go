package ledger

import (
	"context"
	"database/sql"
	"time"
)

// sqliteAddendaTable is a migration (sqliteMigrations). IF NOT EXISTS: a
// ledger of a development build made it before.
const sqliteAddendaTable = `CREATE TABLE IF NOT EXISTS physical_addenda (
	seq        INTEGER PRIMARY KEY,
	request_id TEXT NOT NULL,
	at         INTEGER NOT NULL, -- unix microseconds
	store      TEXT NOT NULL,
	tbl        TEXT NOT NULL,
	kind       TEXT NOT NULL,
	physical   BLOB NOT NULL,
	next_at    INTEGER,          -- unix microseconds; NULL when no re-scan follows
	note       TEXT NOT NULL,
	owner      TEXT NOT NULL,
	log_index  INTEGER NOT NULL,
	report     BLOB
);
CREATE INDEX IF NOT EXISTS physical_addenda_request ON physical_addenda (request_id, seq)`

func (l *SQLite) AddPhysicalAddendum(ctx context.Context, a PhysicalAddendum) error {
	var next any
	if !a.NextAt.IsZero() {
		next = a.NextAt.UnixMicro()
	}
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO physical_addenda (`+addendumColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.RequestID, a.At.UnixMicro(), string(a.Store), a.Table, a.Kind, nonNilRecord(a.Physical), next, a.Note, a.Owner, a.LogIndex, a.Report)
		return unavailable(err)
	})
}

func (l *SQLite) PhysicalAddenda(ctx context.Context, requestID string) ([]PhysicalAddendum, error) {
	return l.readAddenda(ctx, `SELECT `+addendumColumns+` FROM physical_addenda WHERE request_id = ? ORDER BY seq`, requestID)
}

func (l *SQLite) PendingPhysicalAddenda(ctx context.Context) ([]PhysicalAddendum, error) {
	return l.readAddenda(ctx, `SELECT `+addendumColumns+` FROM physical_addenda a
		WHERE next_at IS NOT NULL AND seq = (SELECT max(seq) FROM physical_addenda b
			WHERE b.request_id = a.request_id AND b.store = a.store AND b.tbl = a.tbl)
		ORDER BY seq`)
}

func (l *SQLite) readAddenda(ctx context.Context, query string, args ...any) ([]PhysicalAddendum, error) {
	rows, err := l.readers.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []PhysicalAddendum
	for rows.Next() {
		var (
			a      PhysicalAddendum
			at     int64
			next   sql.NullInt64
			report []byte
		)
		if err := rows.Scan(&a.RequestID, &at, &a.Store, &a.Table, &a.Kind, &a.Physical, &next, &a.Note, &a.Owner, &a.LogIndex, &report); err != nil {
			return nil, unavailable(err)
		}
		a.At, a.Report = time.UnixMicro(at).UTC(), report
		if next.Valid {
			a.NextAt = time.UnixMicro(next.Int64).UTC()
		}
		out = append(out, a)
	}
	return out, unavailable(rows.Err())
}
