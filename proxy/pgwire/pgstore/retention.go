package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// Retention is one configured table with retain, as lethe-proxy sweep
// drives it (connector.Retainer): rows whose retain_by is before the
// cutoff are deleted, in batches of one short transaction each.
//
// A row's age is its retain_by read as a timestamptz (RetainBy's SQL): a
// timestamptz column as it is; timestamp and date columns as UTC; number
// columns as seconds since the Unix epoch; text columns and JSON paths when
// the text is an ISO 8601 date or date-time (UTC when it names no offset)
// or seconds since the epoch. Anything else, and NULL, reads as NULL: the
// row is never deleted, only counted as unreadable. Text is tested against
// patterns before it is cast, so that one malformed value cannot make the
// sweep's statements fail.
type Retention struct {
	store  *Store
	table  Table
	by     Subject
	vacuum bool
}

// NewRetention prepares table's retention by the column or JSON path by;
// vacuum runs VACUUM (INDEX_CLEANUP ON) after rows were deleted. Nothing
// is read until the sweep runs: the table need not exist yet.
func NewRetention(store *Store, table Table, by Subject, vacuum bool) *Retention {
	return &Retention{store: store, table: table, by: by, vacuum: vacuum}
}

var _ connector.Retainer = (*Retention)(nil)

func (r *Retention) Store() ledger.Store { return ledger.StorePostgres }
func (r *Retention) Name() string        { return r.table.String() }

// retentionSQL is one table's sweep statements; $1 is the cutoff.
type retentionSQL struct {
	age                        string // retain_by as timestamptz, NULL when unreadable
	countExpired, countUnknown string
}

// sql reads the retain_by column's type and builds the statements; ok is
// false when the table does not exist.
func (r *Retention) sql(ctx context.Context) (q retentionSQL, ok bool, err error) {
	types, err := r.store.columnTypes(ctx, r.table)
	if errors.Is(err, connector.ErrAbsent) {
		return q, false, nil
	}
	if err != nil {
		return q, false, err
	}
	typ, found := types[r.by.Column]
	if !found {
		return q, false, fmt.Errorf("pgvector store: table %s has no retain_by column %q (check the rule in the config)", r.table, r.by.Column)
	}
	age, err := ageSQL(r.by, typ)
	if err != nil {
		return q, false, fmt.Errorf("pgvector store: table %s: %w", r.table, err)
	}
	from := r.table.ident()
	return retentionSQL{
		age:          age,
		countExpired: fmt.Sprintf("SELECT count(*) FROM %s WHERE %s < $1", from, age),
		countUnknown: fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NULL", from, age),
	}, true, nil
}

func (r *Retention) Expired(ctx context.Context, cutoff time.Time) (connector.Expiry, error) {
	q, ok, err := r.sql(ctx)
	if err != nil || !ok {
		return connector.Expiry{}, err
	}
	var e connector.Expiry
	if err := r.store.pool.QueryRow(ctx, q.countExpired, cutoff).Scan(&e.Expired); err != nil {
		return e, fmt.Errorf("pgvector store: counting expired rows of %s: %w", r.table, noTable(serverError(err)))
	}
	if err := r.store.pool.QueryRow(ctx, q.countUnknown).Scan(&e.Unreadable); err != nil {
		return e, fmt.Errorf("pgvector store: counting rows of %s without a readable retain_by: %w", r.table, noTable(serverError(err)))
	}
	return e, nil
}

// DeleteExpired deletes the expired rows batch at a time, each batch in a
// transaction of its own so that locks stay short; beforeCommit sees the
// batch's ids inside it.
func (r *Retention) DeleteExpired(ctx context.Context, cutoff time.Time, batch int, beforeCommit func(table string, ids []string) error) (int64, error) {
	if batch <= 0 {
		return 0, fmt.Errorf("pgvector store: batch size %d; want at least 1", batch)
	}
	q, ok, err := r.sql(ctx)
	if err != nil || !ok {
		return 0, err
	}
	del := r.table.deleteQuery(q.age+" < $1", batch)
	var total int64
	for {
		var ids []string
		err := pgx.BeginFunc(ctx, r.store.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, del, cutoff)
			if err != nil {
				return err
			}
			if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
			return beforeCommit(r.Name(), ids)
		})
		if err != nil {
			return total, fmt.Errorf("pgvector store: deleting expired rows of %s: %w", r.table, noTable(serverError(err)))
		}
		total += int64(len(ids))
		if len(ids) < batch {
			break
		}
	}
	if r.vacuum && total > 0 {
		return total, r.store.Vacuum(ctx, r.table)
	}
	return total, nil
}

const (
	retentionVerifyMethod = "re-count after the deletes committed: the first query ($1 = the cutoff) counts the expired rows left " +
		"and must return 0; the second counts the rows whose retain_by is NULL or not a time, which are kept"
	retentionAbsentMethod = "the table did not exist when the sweep counted (the query returned true: no relation of that name), so it held no rows"
)

// ResidualExpired counts the expired rows left, with the same condition the
// deletes used.
func (r *Retention) ResidualExpired(ctx context.Context, cutoff time.Time) (connector.Absence, error) {
	q, ok, err := r.sql(ctx)
	if err != nil {
		return connector.Absence{}, err
	}
	if !ok {
		return connector.Absence{Method: retentionAbsentMethod, Queries: []string{r.table.AbsentQuery()}}, nil
	}
	var n int64
	if err := r.store.pool.QueryRow(ctx, q.countExpired, cutoff).Scan(&n); err != nil {
		return connector.Absence{}, fmt.Errorf("pgvector store: verifying the sweep of %s: %w", r.table, noTable(serverError(err)))
	}
	return connector.Absence{Residual: n, Method: retentionVerifyMethod, Queries: []string{q.countExpired, q.countUnknown}}, nil
}

// Patterns of the text a retain_by may hold (PostgreSQL regular
// expressions): an ISO 8601 date or date-time, with or without an offset,
// or seconds since the Unix epoch. The epoch's 11 digits keep to_timestamp
// within its range; the year's four keep make_date within its.
const (
	isoDate      = `[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`
	isoClock     = `([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?`
	isoOffset    = `(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)`
	epochPattern = `^-?[0-9]{1,11}(\.[0-9]{1,9})?$`
	maxEpoch     = "99999999999"
)

// ageSQL is the retain_by expression as timestamptz, NULL when it is
// missing or unreadable, for a column of type typ.
func ageSQL(by Subject, typ string) (string, error) {
	col := pgx.Identifier{by.Column}.Sanitize()
	isJSON := typ == "json" || typ == "jsonb"
	if len(by.Path) > 0 && !isJSON {
		return "", fmt.Errorf("retain_by %s has a JSON path but column %q is %s, not json/jsonb", by, by.Column, typ)
	}
	switch typ {
	case "timestamptz":
		return col, nil
	case "timestamp":
		return "(" + col + " AT TIME ZONE 'UTC')", nil
	case "date":
		return "(" + col + "::timestamp AT TIME ZONE 'UTC')", nil
	case "int2", "int4", "int8", "float4", "float8", "numeric":
		return fmt.Sprintf("(CASE WHEN %[1]s BETWEEN -%[2]s AND %[2]s THEN to_timestamp(%[1]s::float8) END)", col, maxEpoch), nil
	case "text", "varchar", "bpchar", "citext":
		return textTimeSQL(col + "::text"), nil
	case "json", "jsonb":
		return textTimeSQL("(" + jsonText(col, by.Path) + ")"), nil
	}
	return "", fmt.Errorf("retain_by column %q is %s; want timestamptz, timestamp, date, a number of seconds since the Unix epoch, text, or a JSON path", by.Column, typ)
}

// textTimeSQL reads the text expression v as timestamptz when it matches a
// pattern (an ISO 8601 date-time without an offset is UTC), else NULL. The
// CASEs are nested so that nothing is cast before it has matched: a day
// past the month's end (2026-02-30) matches the pattern and is tested
// separately, since casting it would fail the statement.
func textTimeSQL(v string) string {
	dayExists := fmt.Sprintf("substr(%[1]s, 9, 2)::int <= extract(day from make_date(substr(%[1]s, 1, 4)::int, substr(%[1]s, 6, 2)::int, 1) + interval '1 month' - interval '1 day')", v)
	return fmt.Sprintf("(CASE WHEN %[1]s ~ '%[2]s' THEN to_timestamp(%[1]s::float8) "+
		"WHEN %[1]s ~ '^%[3]s([T ]%[4]s)?$' THEN CASE WHEN %[6]s THEN %[1]s::timestamp AT TIME ZONE 'UTC' END "+
		"WHEN %[1]s ~ '^%[3]s[T ]%[4]s%[5]s$' THEN CASE WHEN %[6]s THEN %[1]s::timestamptz END END)",
		v, epochPattern, isoDate, isoClock, isoOffset, dayExists)
}
