package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"
)

// storeSeenSQLite is the table of store marks, a migration
// (sqliteMigrations; IF NOT EXISTS: a ledger of a development build made
// it before).
const storeSeenSQLite = `CREATE TABLE IF NOT EXISTS store_seen (
	store_key  TEXT PRIMARY KEY,
	system_id  TEXT NOT NULL,
	timeline   INTEGER NOT NULL,
	wal        TEXT NOT NULL, -- the LSN as a decimal uint64 (SQLite integers are signed)
	restore    TEXT NOT NULL,
	updated_at INTEGER NOT NULL -- unix microseconds
)`

// StoreSeen implements StoreMarks.
func (l *SQLite) StoreSeen(ctx context.Context, key string) (StoreSeen, bool, error) {
	var (
		s       StoreSeen
		wal     string
		updated int64
	)
	err := l.readers.QueryRowContext(ctx, `SELECT system_id, timeline, wal, restore, updated_at FROM store_seen WHERE store_key = ?`, key).
		Scan(&s.System, &s.Timeline, &wal, &s.Restore, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return StoreSeen{}, false, nil
	}
	if err != nil {
		return StoreSeen{}, false, unavailable(err)
	}
	if s.WAL, err = strconv.ParseUint(wal, 10, 64); err != nil {
		return StoreSeen{}, false, errors.New("ledger: store_seen holds a WAL position that is not a number")
	}
	s.UpdatedAt = time.UnixMicro(updated)
	return s, true, nil
}

// RecordStoreSeen implements StoreMarks in one durable transaction.
func (l *SQLite) RecordStoreSeen(ctx context.Context, key string, s StoreSeen) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO store_seen (store_key, system_id, timeline, wal, restore, updated_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (store_key) DO UPDATE SET system_id = excluded.system_id, timeline = excluded.timeline, wal = excluded.wal,
			restore = excluded.restore, updated_at = excluded.updated_at`,
			key, s.System, s.Timeline, strconv.FormatUint(s.WAL, 10), s.Restore, time.Now().UnixMicro())
		return unavailable(err)
	})
}

// ClearRestores implements StoreMarks in one durable transaction.
func (l *SQLite) ClearRestores(ctx context.Context) (int64, error) {
	var n int64
	err := l.durableTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE store_seen SET restore = '', updated_at = ? WHERE restore <> ''`, time.Now().UnixMicro())
		if err != nil {
			return unavailable(err)
		}
		n, err = res.RowsAffected()
		return unavailable(err)
	})
	return n, err
}
