package walfollow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// maxAdopt is the most rows adopt records from one relation at once, all
// held in memory until they are written. A relation that held more when
// it joined is for lethe-proxy reconcile --adopt.
const maxAdopt = 200000

// toAdopt adds relations that joined the publications to those whose
// earlier rows are to be recorded.
func (f *Follower) toAdopt(joined []published) {
	for _, p := range joined {
		if !slices.ContainsFunc(f.adopting, func(q published) bool { return q.schema == p.schema && q.relation == p.relation }) {
			f.adopting = append(f.adopting, p)
		}
	}
}

// adopt records the rows the relations in f.adopting hold. Rows committed
// before a relation joined the publications are not in the stream: a
// table created, or dropped and re-created, around the proxy since the
// last refresh (or while no follower ran), and written to before it
// joined. adopt runs between two transactions of the stream, once every
// change read is durable in the ledger; it then reads the rows and
// records them durably, before anything read after. Everything read
// before committed before the rows were read, and everything after is
// applied after them, so each record's changes keep their order. A
// relation leaves f.adopting once its rows are durable: after a failure,
// the next session reads them again.
func (s *session) adopt(ctx context.Context) error {
	for s.rec.flight != nil || s.rec.pending() > 0 {
		if s.rec.flight == nil {
			s.launch(ctx, time.Now())
			continue
		}
		if err := s.waitForFlight(ctx); err != nil {
			return err
		}
	}
	for len(s.f.adopting) > 0 {
		p := s.f.adopting[0]
		changes, n, err := s.adoptRows(ctx, p)
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			if err := s.f.cfg.Core.Observe(ctx, changes, true); err != nil {
				return fmt.Errorf("walfollow: recording the rows of %s.%s: %w", p.schema, p.relation, err)
			}
			s.f.Stats.Recorded.Add(int64(len(changes)))
		}
		late := s.dec.late
		s.dec.late = nil
		if err := s.f.lateWrites(ctx, late); err != nil {
			return err
		}
		name := p.schema + "." + p.relation
		switch {
		case n > maxAdopt:
			s.f.log.Warn("wal: a relation held more rows when it joined the publication than the follower records at once; run lethe-proxy reconcile --adopt to record the rest",
				"relation", name, "recorded", maxAdopt)
		case n > 0:
			s.f.log.Info("wal: recorded the rows a relation held when it joined the publication (written before the follower streamed it)",
				"relation", name, "rows", n)
		}
		s.f.adopting = s.f.adopting[1:]
	}
	return nil
}

// adoptRows reads up to maxAdopt+1 rows of p, its id and subject columns
// as text, as the stream carries them, and returns their changes and how
// many rows it read.
func (s *session) adoptRows(ctx context.Context, p published) (changes []ledger.Change, n int, err error) {
	seen := 0
	n, err = readRelation(ctx, s.conn, s.f.cfg.Rules, p, maxAdopt+1, func(r *relation, tuple []column) (err error) {
		if seen++; seen > maxAdopt {
			return nil // counted only: the log says to reconcile the rest
		}
		changes, err = s.dec.write(r, tuple, changes)
		return err
	})
	return changes, n, err
}

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readRelation reads up to limit rows of p (all of them when limit is 0),
// its id and subject columns as text, as the stream carries them, and
// hands each to row as a tuple of the relation it returns; the tuple is
// reused for the next row. It returns how many rows it read. A relation
// dropped meanwhile holds nothing (readError).
func readRelation(ctx context.Context, q querier, rules *extract.Rules, p published, limit int, row func(*relation, []column) error) (n int, err error) {
	t, ok := rules.Stored(p.table)
	if !ok {
		return 0, fmt.Errorf("walfollow: relation %s.%s belongs to %s, which has no rule", p.schema, p.relation, p.table)
	}
	columns := append([]string{t.ID()}, t.Columns()...)
	list := make([]string, len(columns))
	for i, c := range columns {
		list[i] = pgx.Identifier{c}.Sanitize() + "::text"
	}
	from := pgx.Identifier{p.schema, p.relation}.Sanitize()
	if p.only {
		from = "ONLY " + from
	}
	sql := fmt.Sprintf("SELECT %s FROM %s", strings.Join(list, ", "), from)
	if limit > 0 {
		sql += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return 0, readError(p, err)
	}
	defer rows.Close()
	r := &relation{table: t, id: 0, subjects: make([]int, len(columns)-1)}
	for i := range r.subjects {
		r.subjects[i] = i + 1
	}
	texts := make([]*string, len(columns))
	dest := make([]any, len(columns))
	for i := range texts {
		dest[i] = &texts[i]
	}
	tuple := make([]column, len(columns))
	for rows.Next() {
		n++
		if err := rows.Scan(dest...); err != nil {
			return n, fmt.Errorf("walfollow: reading the rows of %s.%s: %w", p.schema, p.relation, err)
		}
		for i, v := range texts {
			tuple[i] = column{kind: 'n'}
			if v != nil {
				tuple[i] = column{kind: 't', data: []byte(*v)}
			}
		}
		if err := row(r, tuple); err != nil {
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, readError(p, err)
	}
	return n, nil
}

// readError is nil for a relation dropped since it joined: it holds
// nothing, and retrying would stop the follower for good.
func readError(p published, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return nil
	}
	return fmt.Errorf("walfollow: reading the rows of %s.%s: %w", p.schema, p.relation, err)
}
