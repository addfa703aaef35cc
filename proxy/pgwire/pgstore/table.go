package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
)

// A configured table need not exist yet: applications such as LangChain.js's
// PGVectorStore create theirs (CREATE TABLE IF NOT EXISTS) on first use. A
// table that does not exist holds no records, so forget finds nothing there
// and says so, and capture tags writes to it by name once it is created.

// noTable marks the server's undefined_table error (SQLSTATE 42P01) with
// connector.ErrAbsent, which every operation on a table that does not
// exist wraps.
func noTable(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" {
		return fmt.Errorf("%w: %w", connector.ErrAbsent, err)
	}
	return err
}

// AbsentQuery is the query by which Absent finds t missing: it returns true
// when no relation of that name exists.
func (t Table) AbsentQuery() string {
	return "SELECT to_regclass(" + quoteLiteral(t.ident()) + ") IS NULL"
}

// Absent reports whether t does not exist, by AbsentQuery.
func (s *Store) Absent(ctx context.Context, t Table) (bool, error) {
	var absent bool
	if err := s.pool.QueryRow(ctx, t.AbsentQuery()).Scan(&absent); err != nil {
		return false, fmt.Errorf("pgvector store: looking for %s: %w", t, serverError(err))
	}
	return absent, nil
}

// ParseTable builds a Table from a rule as the configuration writes it:
// "schema.table" (public when no schema is given), the id column and the
// subject expressions, parsed as capture parses them.
func ParseTable(table, id string, subjects []string) (Table, error) {
	schema, rel, err := extract.SplitTable(table)
	if err != nil {
		return Table{}, err
	}
	t := Table{Schema: schema, Name: rel, ID: id}
	for _, expr := range subjects {
		s, err := extract.ParseSubject(expr)
		if err != nil {
			return Table{}, err
		}
		t.Subjects = append(t.Subjects, Subject{Column: s.Column, Path: s.Path})
	}
	return t, nil
}
