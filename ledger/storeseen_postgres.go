package ledger

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// storeSeenPostgres is the table of store marks, a migration
// (pgMigrations; %[1]s is the schema; IF NOT EXISTS: a ledger of a
// development build made it before). The WAL position is numeric: an LSN
// is an unsigned 64-bit number.
const storeSeenPostgres = `CREATE TABLE IF NOT EXISTS %[1]s.store_seen (
	store_key  text PRIMARY KEY,
	system_id  text NOT NULL,
	timeline   bigint NOT NULL,
	wal        numeric(20) NOT NULL,
	restore    text NOT NULL,
	updated_at timestamptz NOT NULL
)`

// StoreSeen implements StoreMarks.
func (l *Postgres) StoreSeen(ctx context.Context, key string) (StoreSeen, bool, error) {
	var (
		s   StoreSeen
		wal string
	)
	err := l.pool.QueryRow(ctx, l.q(`SELECT system_id, timeline, wal::text, restore, updated_at FROM ledger.store_seen WHERE store_key = $1`), key).
		Scan(&s.System, &s.Timeline, &wal, &s.Restore, &s.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return StoreSeen{}, false, nil
	}
	if err != nil {
		return StoreSeen{}, false, unavailable(err)
	}
	if s.WAL, err = strconv.ParseUint(wal, 10, 64); err != nil {
		return StoreSeen{}, false, errors.New("ledger: store_seen holds a WAL position that is not a number")
	}
	return s, true, nil
}

// RecordStoreSeen implements StoreMarks, committed with synchronous_commit
// on (the pool's setting).
func (l *Postgres) RecordStoreSeen(ctx context.Context, key string, s StoreSeen) error {
	_, err := l.pool.Exec(ctx, l.q(`INSERT INTO ledger.store_seen (store_key, system_id, timeline, wal, restore, updated_at) VALUES ($1, $2, $3, $4::text::numeric, $5, now())
		ON CONFLICT (store_key) DO UPDATE SET system_id = excluded.system_id, timeline = excluded.timeline, wal = excluded.wal,
		restore = excluded.restore, updated_at = excluded.updated_at`), key, s.System, s.Timeline, strconv.FormatUint(s.WAL, 10), s.Restore)
	return unavailable(err)
}

// ClearRestores implements StoreMarks.
func (l *Postgres) ClearRestores(ctx context.Context) (int64, error) {
	tag, err := l.pool.Exec(ctx, l.q(`UPDATE ledger.store_seen SET restore = '', updated_at = now() WHERE restore <> ''`))
	if err != nil {
		return 0, unavailable(err)
	}
	return tag.RowsAffected(), nil
}
