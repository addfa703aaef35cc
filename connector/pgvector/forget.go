package pgvector

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Table is one configured table as forget sees it.
type Table struct {
	Schema, Name string    // unquoted, as in the rules ("public", "docs")
	ID           string    // record id column
	Subjects     []Subject // where the table keeps its data subjects
}

// Subject is a column, or a path of keys into a json/jsonb column, as in
// the capture rules. A JSON array found there holds one subject per element.
type Subject struct {
	Column string
	Path   []string
}

func (t Table) String() string { return t.Schema + "." + t.Name }

func (t Table) ident() string { return pgx.Identifier{t.Schema, t.Name}.Sanitize() }

// Match is the SQL condition that selects a subject's rows in one table,
// with $1 the subject and $2 the record ids the ledger holds for it. Forget
// deletes, and verifies absence, with the same condition:
//
//   - rows whose subject column or JSON path equals the subject, or holds
//     it in a JSON array (this finds rows with database-generated ids and
//     rows written before Lethe was installed);
//   - rows the ledger tagged with the subject by id whose subject is now
//     NULL (metadata stripped by a later update).
//
// A row the ledger tagged by id but that now names another subject is not
// deleted: the tag may come from an INSERT … ON CONFLICT DO NOTHING that
// never wrote, or the row was reassigned, and deleting it would erase
// another person's data.
type Match struct {
	table     Table
	condition string
}

// Condition is the WHERE clause, for certificates and logs.
func (m Match) Condition() string { return m.condition }

// MatchFor builds the condition for t, reading the column types from the
// catalog so that each subject is compared the way an index on it would
// be used (text columns directly, JSON paths with ->/->>).
func (s *Store) MatchFor(ctx context.Context, t Table) (Match, error) {
	types, err := s.columnTypes(ctx, t)
	if err != nil {
		return Match{}, err
	}
	if _, ok := types[t.ID]; !ok {
		return Match{}, fmt.Errorf("pgvector store: table %s has no id column %q (check the rule in the config)", t, t.ID)
	}
	var match, null []string
	for _, sub := range t.Subjects {
		typ, ok := types[sub.Column]
		if !ok {
			return Match{}, fmt.Errorf("pgvector store: table %s has no subject column %q (check the rule in the config)", t, sub.Column)
		}
		m, n, err := subjectSQL(sub, typ)
		if err != nil {
			return Match{}, fmt.Errorf("pgvector store: table %s: %w", t, err)
		}
		match, null = append(match, m), append(null, n)
	}
	if len(match) == 0 {
		return Match{}, fmt.Errorf("pgvector store: table %s has no subject in its rule", t)
	}
	cond := fmt.Sprintf("%s OR (%s::text = ANY($2::text[]) AND %s)",
		strings.Join(match, " OR "), pgx.Identifier{t.ID}.Sanitize(), strings.Join(null, " AND "))
	return Match{table: t, condition: cond}, nil
}

// subjectSQL returns the condition "this subject expression holds $1" and
// the condition "it holds no subject at all" for a column of type typ.
func subjectSQL(sub Subject, typ string) (match, null string, err error) {
	col := pgx.Identifier{sub.Column}.Sanitize()
	isJSON := typ == "json" || typ == "jsonb"
	if len(sub.Path) > 0 && !isJSON {
		return "", "", fmt.Errorf("subject %s has a JSON path but column %q is %s, not json/jsonb", sub, sub.Column, typ)
	}
	if !isJSON {
		switch typ {
		case "text", "varchar", "bpchar", "name", "citext":
			return col + " = $1::text", col + " IS NULL", nil
		}
		// uuid, integers…: compared as text, as the capture renders them.
		return col + "::text = $1::text", col + " IS NULL", nil
	}
	// The scalar test is written as the rule is (col->'a'->>'b'), so an
	// expression index on it can be used; the array test needs jsonb.
	scalar, path := col, make([]string, len(sub.Path))
	for i, k := range sub.Path {
		op := "->"
		if i == len(sub.Path)-1 {
			op = "->>"
		}
		scalar += op + quoteLiteral(k)
		path[i] = quoteLiteral(k)
	}
	value := col + "::jsonb"
	if len(path) > 0 {
		value = "(" + col + "::jsonb #> ARRAY[" + strings.Join(path, ", ") + "]::text[])"
	}
	if len(sub.Path) == 0 {
		scalar = value + " #>> '{}'"
	}
	match = fmt.Sprintf("(%s = $1::text OR (jsonb_typeof(%s) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(%s) AS e (v) WHERE e.v = $1::text)))",
		scalar, value, value)
	null = fmt.Sprintf("(%s IS NULL OR jsonb_typeof(%s) = 'null')", value, value)
	return match, null, nil
}

func (s Subject) String() string {
	if len(s.Path) == 0 {
		return s.Column
	}
	return s.Column + "->'" + strings.Join(s.Path, "'->'") + "'"
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (s *Store) columnTypes(ctx context.Context, t Table) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT a.attname, ty.typname
		FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, t.ident())
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading the columns of %s: %w", t, err)
	}
	types := map[string]string{}
	var name, typ string
	_, err = pgx.ForEachRow(rows, []any{&name, &typ}, func() error {
		types[name] = typ
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading the columns of %s: %w", t, err)
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("pgvector store: table %s does not exist (check the rule in the config)", t)
	}
	return types, nil
}

// Matching returns the ids (as text) of the rows that match now.
func (s *Store) Matching(ctx context.Context, m Match, subject string, ids []string) ([]string, error) {
	rows, err := s.pool.Query(ctx, m.SelectIDs(), subject, nonNilIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading %s: %w", m.table, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading %s: %w", m.table, err)
	}
	return out, nil
}

// SelectIDs is the query Matching runs.
func (m Match) SelectIDs() string {
	return fmt.Sprintf("SELECT %s::text FROM %s WHERE %s", pgx.Identifier{m.table.ID}.Sanitize(), m.table.ident(), m.condition)
}

// CountQuery is the query that verifies absence: it must return 0.
func (m Match) CountQuery() string {
	return fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", m.table.ident(), m.condition)
}

// Delete deletes the matching rows in one transaction and returns their
// ids. Rows are deleted in batches of batchSize (by ctid) so that a large
// subject does not build one huge statement result at once.
func (s *Store) Delete(ctx context.Context, m Match, subject string, ids []string, batchSize int) ([]string, error) {
	if batchSize <= 0 {
		batchSize = 5000
	}
	q := fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(SELECT ctid FROM %[1]s WHERE %[2]s LIMIT %[3]d)) RETURNING %[4]s::text`,
		m.table.ident(), m.condition, batchSize, pgx.Identifier{m.table.ID}.Sanitize())
	var deleted []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for {
			rows, err := tx.Query(ctx, q, subject, nonNilIDs(ids))
			if err != nil {
				return err
			}
			batch, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			deleted = append(deleted, batch...)
			if len(batch) < batchSize {
				return nil
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: deleting from %s: %w", m.table, err)
	}
	return deleted, nil
}

// Residual counts the rows that still match: 0 means verified absent.
func (s *Store) Residual(ctx context.Context, m Match, subject string, ids []string) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, m.CountQuery(), subject, nonNilIDs(ids)).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgvector store: verifying %s: %w", m.table, err)
	}
	return n, nil
}

// Vacuum runs VACUUM (INDEX_CLEANUP ON) on the table, so that the deleted
// tuples and their HNSW index entries are physically removed: the default
// INDEX_CLEANUP auto may skip index vacuuming when few pages changed.
func (s *Store) Vacuum(ctx context.Context, t Table) error {
	if _, err := s.pool.Exec(ctx, "VACUUM (INDEX_CLEANUP ON) "+t.ident()); err != nil {
		return fmt.Errorf("pgvector store: vacuuming %s: %w", t, err)
	}
	return nil
}

func nonNilIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
