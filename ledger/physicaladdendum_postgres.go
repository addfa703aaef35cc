package ledger

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresAddendaTable is a migration (pgMigrations; %[1]s is the
// schema). IF NOT EXISTS: a ledger of a development build made it before.
const postgresAddendaTable = `CREATE TABLE IF NOT EXISTS %[1]s.physical_addenda (
	seq        bigserial PRIMARY KEY,
	request_id text NOT NULL,
	at         timestamptz NOT NULL,
	store      text NOT NULL,
	tbl        text NOT NULL,
	kind       text NOT NULL,
	physical   bytea NOT NULL,
	next_at    timestamptz,
	note       text NOT NULL,
	owner      text NOT NULL,
	log_index  bigint NOT NULL,
	report     bytea
);
CREATE INDEX IF NOT EXISTS physical_addenda_request ON %[1]s.physical_addenda (request_id, seq)`

func (l *Postgres) AddPhysicalAddendum(ctx context.Context, a PhysicalAddendum) error {
	var next any
	if !a.NextAt.IsZero() {
		next = a.NextAt
	}
	_, err := l.pool.Exec(ctx, l.q(`INSERT INTO ledger.physical_addenda (`+addendumColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`),
		a.RequestID, a.At, string(a.Store), a.Table, a.Kind, nonNilRecord(a.Physical), next, a.Note, a.Owner, a.LogIndex, a.Report)
	return unavailable(err)
}

func (l *Postgres) PhysicalAddenda(ctx context.Context, requestID string) ([]PhysicalAddendum, error) {
	return l.readAddenda(ctx, `SELECT `+addendumColumns+` FROM ledger.physical_addenda WHERE request_id = $1 ORDER BY seq`, requestID)
}

func (l *Postgres) PendingPhysicalAddenda(ctx context.Context) ([]PhysicalAddendum, error) {
	return l.readAddenda(ctx, `SELECT `+addendumColumns+` FROM (SELECT DISTINCT ON (request_id, store, tbl) * FROM ledger.physical_addenda
		ORDER BY request_id, store, tbl, seq DESC) latest WHERE next_at IS NOT NULL ORDER BY seq`)
}

func (l *Postgres) readAddenda(ctx context.Context, query string, args ...any) ([]PhysicalAddendum, error) {
	rows, err := l.pool.Query(ctx, l.q(query), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PhysicalAddendum, error) {
		var (
			a     PhysicalAddendum
			store string
			next  *time.Time
		)
		err := row.Scan(&a.RequestID, &a.At, &store, &a.Table, &a.Kind, &a.Physical, &next, &a.Note, &a.Owner, &a.LogIndex, &a.Report)
		a.Store, a.At = Store(store), a.At.UTC()
		if next != nil {
			a.NextAt = next.UTC()
		}
		return a, err
	})
	return out, unavailable(err)
}
