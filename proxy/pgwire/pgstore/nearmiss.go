package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Near misses are rows whose subject differs from the one asked for only in
// case, surrounding whitespace or Unicode normalisation form. Forget
// compares subjects as exact bytes (so that it never deletes another
// person's rows); when a preview finds nothing, the engine counts these so
// that a mistyped subject is not certified as erased.
//
// Both sides are normalised in SQL, which covers every combination at
// once: lower(normalize(btrim(x, <white space>), NFC)). normalize() needs a
// UTF8 database (PostgreSQL 13+); elsewhere only ASCII white space is
// trimmed and the Unicode form is not compared. No index serves these
// expressions: the count reads the whole table, which is why it runs only
// when nothing was found.

// spelling is where a rule's subject is read in a row.
type spelling struct {
	text  string // the subject as text: col, col::text, col->'a'->>'b'
	array string // its jsonb value, which may be an array of subjects; "" for a column that is not JSON
}

// spellingOf reads sub (already checked by subjectSQL) as BySubject does.
func spellingOf(sub Subject, typ string) spelling {
	col := pgx.Identifier{sub.Column}.Sanitize()
	switch typ {
	case "json", "jsonb":
		scalar, value := jsonSubject(col, sub.Path, typ)
		return spelling{text: scalar, array: value}
	case "text", "varchar", "bpchar", "name", "citext":
		return spelling{text: col}
	}
	return spelling{text: col + "::text"}
}

// White space trimmed around a subject: Unicode's White_Space property
// (what Go's unicode.IsSpace reports) in a UTF8 database, ASCII's alone in
// others, whose encodings cannot hold the rest.
const (
	unicodeSpace = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
	asciiSpace   = "\t\n\v\f\r "
)

// folded is expr (text) without surrounding white space, NFC-normalised
// when utf8, and lower-cased, compared in the database's default
// collation whatever the column's.
func folded(expr string, utf8 bool) string {
	if !utf8 {
		return fmt.Sprintf(`lower(btrim((%s)::text, %s) COLLATE "default")`, expr, escapeLiteral(asciiSpace))
	}
	return fmt.Sprintf(`lower(normalize(btrim((%s)::text, %s), NFC) COLLATE "default")`, expr, escapeLiteral(unicodeSpace))
}

// escapeLiteral writes s as an escape string constant (E'…') holding
// only printable ASCII, so that the statement reads the same in logs and
// errors; \u escapes are accepted in a UTF8 database only, where they are
// used. s holds no quote or backslash.
func escapeLiteral(s string) string {
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r > ' ' && r < 0x7f || r == ' ':
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteString("'")
	return b.String()
}

// nearCond selects the rows some subject of which equals $1 once both are
// folded; a JSON array is searched element by element.
func (m Match) nearCond(utf8 bool) string {
	want := folded("$1", utf8)
	var ors []string
	for _, s := range m.spellings {
		ors = append(ors, folded(s.text, utf8)+" = "+want)
		if s.array != "" {
			// CASE, not AND: jsonb_array_elements_text fails on a value
			// that is not an array, and AND does not fix the order.
			ors = append(ors, fmt.Sprintf("CASE WHEN jsonb_typeof(%[1]s) = 'array' THEN EXISTS "+
				"(SELECT 1 FROM jsonb_array_elements_text(%[1]s) AS e (v) WHERE %[2]s = %[3]s) ELSE false END",
				s.array, folded("e.v", utf8), want))
		}
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// NearMissQuery counts the rows that match $1 (the subject) once case,
// surrounding white space and (when utf8) Unicode normalisation are
// ignored, but do not match it exactly (BySubject).
func (m Match) NearMissQuery(utf8 bool) string {
	return fmt.Sprintf("SELECT count(*) FROM %s WHERE %s AND NOT coalesce((%s), false)", m.table.ident(), m.nearCond(utf8), m.BySubject)
}

// NearMisses counts the rows NearMissQuery selects for subject.
func (s *Store) NearMisses(ctx context.Context, m Match, subject string) (int64, error) {
	utf8, err := s.unicodeDatabase(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.pool.QueryRow(ctx, m.NearMissQuery(utf8), subject).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgvector store: counting near misses in %s: %w", m.table, noTable(serverError(err)))
	}
	return n, nil
}

// unicodeDatabase reports whether the database's encoding is UTF8, which
// normalize() needs; asked once.
func (s *Store) unicodeDatabase(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.encoding == "" {
		if err := s.pool.QueryRow(ctx, "SELECT current_setting('server_encoding')").Scan(&s.encoding); err != nil {
			return false, fmt.Errorf("pgvector store: reading the database's encoding: %w", serverError(err))
		}
	}
	return s.encoding == "UTF8", nil
}

// NearMisses counts the table's rows that name the subject in another
// spelling (see Match.NearMissQuery); a table that does not exist has
// none. variants are not needed: the database normalises what it holds.
func (l *Layer) NearMisses(ctx context.Context, subject string, _ []string) (int64, error) {
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		return 0, err
	}
	n, err := l.store.NearMisses(ctx, *m, subject)
	if l.missing(m, err) {
		return 0, nil
	}
	return n, err
}
