package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/connector"
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

// Match is the pair of SQL conditions that select a subject's rows in one
// table. Forget deletes, and verifies absence, with the same two:
//
//   - BySubject ($1 = the subject): rows whose subject column or JSON path
//     equals the subject, or holds it in a JSON array (this finds rows with
//     database-generated ids and rows written before Lethe was installed);
//   - ByID ($1 = the record ids the ledger holds for the subject): those
//     rows whose subject is now NULL (metadata stripped by a later update).
//
// The two select disjoint rows (one needs a subject, the other none), so
// their counts add up. They run as separate statements so that each uses
// its own index: one OR of both made PostgreSQL scan the whole table once
// the ledger held a few thousand ids.
//
// A row the ledger tagged by id but that now names another subject is not
// deleted: the tag may come from an INSERT … ON CONFLICT DO NOTHING that
// never wrote, or the row was reassigned, and deleting it would erase
// another person's data.
type Match struct {
	table           Table
	BySubject, ByID string
	// validID keeps the ledger ids a value of the id column can equal:
	// ids are compared in the column's own type, so that its index serves
	// them, and a text that is no uuid (say) cannot match a uuid row.
	validID func(string) bool
	// spellings are where BySubject reads the subject, for near misses.
	spellings []spelling
}

// ledgerIDs is ids without those no row can have.
func (m Match) ledgerIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if m.validID(id) {
			out = append(out, id)
		}
	}
	return out
}

// part is one condition with its argument.
type part struct {
	cond string
	arg  any
}

// parts are the statements to run for subject and the ledger's ids (the
// id part is left out when the ledger has no usable id).
func (m Match) parts(subject string, ids []string) []part {
	ps := []part{{m.BySubject, subject}}
	if ids = m.ledgerIDs(ids); len(ids) > 0 {
		ps = append(ps, part{m.ByID, ids})
	}
	return ps
}

// MatchFor builds the condition for t, reading the column types from the
// catalog so that each subject is compared the way an index on it would
// be used (text columns directly, JSON paths with ->/->>).
func (s *Store) MatchFor(ctx context.Context, t Table) (Match, error) {
	types, err := s.columnTypes(ctx, t)
	if err != nil {
		return Match{}, err
	}
	return NewMatch(t, types)
}

// NewMatch builds the condition for t from its column types (pg_type
// names by column name), without reaching the store: MatchFor gives it the
// catalog's, PlanFor the ones the rule alone implies.
func NewMatch(t Table, types map[string]string) (Match, error) {
	idType, ok := types[t.ID]
	if !ok {
		return Match{}, fmt.Errorf("pgvector store: table %s has no id column %q (check the rule in the config)", t, t.ID)
	}
	idCmp, validID := idSQL(pgx.Identifier{t.ID}.Sanitize(), idType)
	var match, null []string
	var spellings []spelling
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
		spellings = append(spellings, spellingOf(sub, typ))
	}
	if len(match) == 0 {
		return Match{}, fmt.Errorf("pgvector store: table %s has no subject in its rule", t)
	}
	return Match{table: t, BySubject: strings.Join(match, " OR "), ByID: idCmp + " AND " + strings.Join(null, " AND "),
		validID: validID, spellings: spellings}, nil
}

// idSQL compares the id column with the ledger's ids ($1, text[]) in the
// column's type when it is a common key type, so the primary key index is
// used; other types are compared as text.
func idSQL(col, typ string) (string, func(string) bool) {
	switch typ {
	case "uuid":
		return col + " = ANY($1::text[]::uuid[])", isUUID
	case "int2", "int4", "int8":
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[typ]
		return col + " = ANY($1::text[]::" + typ + "[])", func(s string) bool {
			_, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
			return err == nil
		}
	case "text", "varchar", "bpchar", "name":
		return col + " = ANY($1::text[])", func(string) bool { return true }
	}
	return col + "::text = ANY($1::text[])", func(string) bool { return true }
}

// isUUID accepts the forms PostgreSQL's uuid input accepts that a client
// would send: 32 hex digits, with or without the usual hyphens and braces.
func isUUID(s string) bool {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			n++
		case c == '-':
		default:
			return false
		}
	}
	return n == 32
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
	scalar, value := jsonSubject(col, sub.Path, typ)
	// Arrays: a string element is found by containment (one pass, GIN
	// indexable). The capture also tags numbers and booleans in arrays by
	// their JSON text; those need the element scan, which the planner
	// drops when the subject cannot be one ($1 is a constant).
	match = fmt.Sprintf("(%[1]s = $1::text OR %[2]s @> to_jsonb($1::text) OR ($1::text ~ '^(-?[0-9][0-9.eE+-]*|true|false)$' "+
		"AND jsonb_typeof(%[2]s) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(%[2]s) AS e (v) WHERE e.v = $1::text)))",
		scalar, value)
	null = fmt.Sprintf("(%[1]s IS NULL OR jsonb_typeof(%[1]s) = 'null')", value)
	return match, null, nil
}

// jsonSubject is the subject's text at path in the json or jsonb column
// col (scalar) and its value as jsonb (value). Both are written as the
// rule is (col->'a'->>'b' and col->'a'->'b'), so that an application's
// indexes on those expressions serve forget: a btree on the ->> form for
// scalar subjects, a GIN on the -> form (as jsonb) for arrays.
func jsonSubject(col string, path []string, typ string) (scalar, value string) {
	scalar, value = jsonText(col, path), col
	for _, k := range path {
		value += "->" + quoteLiteral(k)
	}
	if typ == "json" || len(path) == 0 {
		return scalar, "(" + value + ")::jsonb"
	}
	return scalar, "(" + value + ")"
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
		return nil, fmt.Errorf("pgvector store: reading the columns of %s: %w", t, serverError(err))
	}
	types := map[string]string{}
	var name, typ string
	_, err = pgx.ForEachRow(rows, []any{&name, &typ}, func() error {
		types[name] = typ
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading the columns of %s: %w", t, serverError(err))
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("pgvector store: %s: %w (check the rule in the config, or create the table)", t, connector.ErrAbsent)
	}
	return types, nil
}

// Matching returns the ids (as text) of the rows that match now.
func (s *Store) Matching(ctx context.Context, m Match, subject string, ids []string) ([]string, error) {
	out := []string{}
	for _, p := range m.parts(subject, ids) {
		rows, err := s.pool.Query(ctx, m.selectIDs(p.cond), p.arg)
		if err != nil {
			return nil, fmt.Errorf("pgvector store: reading %s: %w", m.table, noTable(serverError(err)))
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("pgvector store: reading %s: %w", m.table, noTable(serverError(err)))
		}
		out = append(out, found...)
	}
	return out, nil
}

func (m Match) selectIDs(cond string) string {
	return fmt.Sprintf("SELECT %s::text FROM %s WHERE %s", pgx.Identifier{m.table.ID}.Sanitize(), m.table.ident(), cond)
}

// CountQueries are the queries that verify absence, for the certificate:
// each must return 0.
func (m Match) CountQueries() []string {
	return []string{m.countQuery(m.BySubject), m.countQuery(m.ByID)}
}

func (m Match) countQuery(cond string) string {
	return fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", m.table.ident(), cond)
}

// Delete deletes the matching rows in one transaction and returns their
// ids. Rows go in batches of batchSize (by ctid) so that a large subject
// does not build one huge result at once. beforeCommit, when not nil, is
// given all the ids deleted before the transaction commits: forget journals
// them there, so that a crash after the commit still knows what went.
func (s *Store) Delete(ctx context.Context, m Match, subject string, ids []string, batchSize int, beforeCommit func([]string) error) ([]string, error) {
	if batchSize <= 0 {
		batchSize = deleteBatch
	}
	var deleted []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, p := range m.parts(subject, ids) {
			q := m.deleteQuery(p.cond, batchSize)
			for {
				rows, err := tx.Query(ctx, q, p.arg)
				if err != nil {
					return err
				}
				batch, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					return err
				}
				deleted = append(deleted, batch...)
				if len(batch) < batchSize {
					break
				}
			}
		}
		if beforeCommit != nil && len(deleted) > 0 {
			return beforeCommit(deleted)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: deleting from %s: %w", m.table, noTable(serverError(err)))
	}
	return deleted, nil
}

// deleteBatch is how many rows one DELETE statement removes at most.
const deleteBatch = 5000

// deleteQuery deletes up to batchSize of the rows cond selects, by ctid,
// returning their ids; Delete repeats it until a batch comes back short.
func (m Match) deleteQuery(cond string, batchSize int) string {
	return m.table.deleteQuery(cond, batchSize)
}

// deleteQuery deletes up to batchSize of t's rows that cond selects, by
// ctid, returning their ids: batches keep each statement's locks short.
func (t Table) deleteQuery(cond string, batchSize int) string {
	return fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(SELECT ctid FROM %[1]s WHERE %[2]s LIMIT %[3]d)) RETURNING %[4]s::text`,
		t.ident(), cond, batchSize, pgx.Identifier{t.ID}.Sanitize())
}

// Residual counts the rows that still match: 0 means verified absent.
func (s *Store) Residual(ctx context.Context, m Match, subject string, ids []string) (int64, error) {
	var total int64
	for _, p := range m.parts(subject, ids) {
		var n int64
		if err := s.pool.QueryRow(ctx, m.countQuery(p.cond), p.arg).Scan(&n); err != nil {
			return 0, fmt.Errorf("pgvector store: verifying %s: %w", m.table, noTable(serverError(err)))
		}
		total += n
	}
	return total, nil
}

// Vacuum runs VACUUM (INDEX_CLEANUP ON) on the table, so that the deleted
// tuples and their HNSW index entries are physically removed: the default
// INDEX_CLEANUP auto may skip index vacuuming when few pages changed.
func (s *Store) Vacuum(ctx context.Context, t Table) error {
	if _, err := s.pool.Exec(ctx, t.VacuumStatement()); err != nil {
		return fmt.Errorf("pgvector store: vacuuming %s: %w", t, noTable(serverError(err)))
	}
	return nil
}

// VacuumStatement is the statement Vacuum runs.
func (t Table) VacuumStatement() string { return "VACUUM (INDEX_CLEANUP ON) " + t.ident() }

// jsonText is the text at path in the json or jsonb column col, written
// as rules are (col->'a'->>'b'), so that an application's index on that
// expression serves it; the whole value as text when path is empty.
func jsonText(col string, path []string) string {
	if len(path) == 0 {
		return col + " #>> '{}'"
	}
	for i, k := range path {
		if i == len(path)-1 {
			col += "->>" + quoteLiteral(k)
		} else {
			col += "->" + quoteLiteral(k)
		}
	}
	return col
}
