package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// scanBatch is how many rows a scan fetches per round trip and hands on
// at once: it bounds the scan's memory whatever the table's size.
const scanBatch = 1000

// Scanner reads one configured table's rows for reconcile
// (connector.Scanner): the id and the columns its subjects are read from,
// never the vector, through a cursor in one READ ONLY REPEATABLE READ
// transaction, so that the counts describe one snapshot of the table.
type Scanner struct {
	store *Store
	table extract.Stored
	batch int
}

var _ connector.Scanner = (*Scanner)(nil)

// Scanner returns the scanner of table. Its subjects are read from the
// stored values by the rule that tags writes (extract.Stored, as the WAL
// follower reads them).
func (s *Store) Scanner(table extract.Stored) *Scanner {
	return &Scanner{store: s, table: table, batch: scanBatch}
}

func (sc *Scanner) Store() ledger.Store { return ledger.StorePostgres }
func (sc *Scanner) Name() string        { return sc.table.Name() }

// query selects the id and the subject columns as text, as the server
// outputs them (which is what the WAL follower reads too).
func (sc *Scanner) query() string {
	cols := []string{pgx.Identifier{sc.table.ID()}.Sanitize() + "::text"}
	for _, c := range sc.table.Columns() {
		cols = append(cols, pgx.Identifier{c}.Sanitize()+"::text")
	}
	return fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "),
		pgx.Identifier{sc.table.Schema(), sc.table.Relation()}.Sanitize())
}

// ScanMethod names the query and how it is read.
func (sc *Scanner) ScanMethod() string {
	return "every row, read in one READ ONLY REPEATABLE READ transaction through a cursor " +
		fmt.Sprintf("(FETCH %d) over: %s", sc.batch, sc.query())
}

// Scan reads every row of the table (its partitions and inheritance
// children included, as a SELECT from it does) and calls fn per batch.
func (sc *Scanner) Scan(ctx context.Context, fn func([]connector.Record) error) error {
	tx, err := sc.store.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("pgvector: scanning %s: %w", sc.Name(), serverError(err))
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "DECLARE lethe_reconcile NO SCROLL CURSOR FOR "+sc.query()); err != nil {
		return fmt.Errorf("pgvector: scanning %s: %w", sc.Name(), noTable(serverError(err)))
	}
	fetch := fmt.Sprintf("FETCH %d FROM lethe_reconcile", sc.batch)
	n := len(sc.table.Columns())
	var (
		batch   = make([]connector.Record, 0, sc.batch)
		vals    = make([]string, n)
		present = make([]bool, n)
		scan    = make([]any, n+1)
		id      *string
		texts   = make([]*string, n)
	)
	scan[0] = &id
	for i := range texts {
		scan[i+1] = &texts[i]
	}
	for {
		// The simple protocol: the same FETCH text returns other columns
		// for each table's cursor, and a described (cached) statement
		// would keep the first table's.
		rows, err := tx.Query(ctx, fetch, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return fmt.Errorf("pgvector: scanning %s: %w", sc.Name(), serverError(err))
		}
		batch = batch[:0]
		for rows.Next() {
			if err := rows.Scan(scan...); err != nil {
				rows.Close()
				return fmt.Errorf("pgvector: scanning %s: %w", sc.Name(), serverError(err))
			}
			batch = append(batch, sc.record(id, texts, vals, present))
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("pgvector: scanning %s: %w", sc.Name(), serverError(err))
		}
		if len(batch) == 0 {
			return nil
		}
		if err := fn(batch); err != nil {
			return err
		}
	}
}

// record is one row as reconcile reads it.
func (sc *Scanner) record(id *string, texts []*string, vals []string, present []bool) connector.Record {
	r := connector.Record{Table: sc.Name()}
	if id != nil {
		r.ID = *id
	}
	for i, t := range texts {
		vals[i], present[i] = "", t != nil
		if t != nil {
			vals[i] = *t
		}
	}
	subjects, err := sc.table.Subjects(nil, vals, present)
	if err != nil {
		r.Unreadable = true
		return r
	}
	r.Subjects = subjects
	return r
}
