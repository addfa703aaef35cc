package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// fingerprint is what the physical scan needs to recognise the bytes of
// the records a forget deletes, read just before the delete: fragments of
// their vectors as pgvector stores them, the subject's text, and the heap
// blocks the rows were in. Memory only: never logged, journaled or
// returned.
type fingerprint struct {
	match   *pageMatcher
	records int64
	blocks  map[int64]bool // heap blocks of the rows' ctids
	// lines are the rows' ctids (block, then line pointers) not yet read
	// for their TOAST pointers; toast is what that reading found.
	lines map[int64][]uint16
	toast toastTargets
	// vectors are the rows' values not yet looked for in the table's
	// vector indexes, at most vectorsKept of them (vectorsSkipped the
	// rest); indexes is what looking found, by index oid.
	vectors        []rowVectors
	vectorsKept    int
	vectorsSkipped int
	indexes        map[uint32]*indexTargets
	// compressed counts vector values stored compressed (pglz, lz4): their
	// bytes do not appear on pages as they are, so the scan cannot see them.
	compressed int64
	err        error     // reading the bytes failed: the scan is not possible
	touched    time.Time // when a Delete last added to it
}

func newFingerprint(subject string) *fingerprint {
	f := &fingerprint{match: newPageMatcher(), blocks: map[int64]bool{}, lines: map[int64][]uint16{}}
	f.match.add([]byte(subject), false)
	// A json (text) column keeps the subject as JSON text, escaped.
	if quoted, err := json.Marshal(subject); err == nil {
		if esc := string(quoted[1 : len(quoted)-1]); esc != subject {
			f.match.add([]byte(esc), false)
		}
	}
	return f
}

// readFingerprint reads, for the rows m selects for subject and ids (the
// rows Delete is about to delete), their ctids and the values of their
// columns of the types storedTypes knows, as stored, both as written and
// L2-normalised (the copy a cosine index keeps), with the copies an index
// on an expression of a vector column keeps (storedType.copies).
func (s *Store) readFingerprint(ctx context.Context, m Match, subject string, ids []string, f *fingerprint) error {
	types, err := s.columnTypes(ctx, m.table)
	if err != nil {
		return err
	}
	sel := []string{"(ctid::text::point)[0]::int8", "(ctid::text::point)[1]::int4"}
	var columns []storedColumn
	for col, typ := range types {
		stored, ok := storedTypes[typ]
		if !ok {
			continue
		}
		q := pgx.Identifier{col}.Sanitize()
		normalised := "NULL::bytea"
		if stored.normalise {
			normalised = stored.send + "(l2_normalize(" + q + "))"
		}
		sel = append(sel, stored.send+"("+q+")", normalised, "(pg_column_compression("+q+") IS NOT NULL)")
		columns = append(columns, storedColumn{name: col, storedType: stored})
	}
	for _, p := range m.parts(subject, ids) {
		rows, err := s.pool.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), m.table.ident(), p.cond), p.arg)
		if err != nil {
			return fmt.Errorf("pgvector store: reading the bytes of the subject's rows in %s: %w", m.table, noTable(serverError(err)))
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				rows.Close()
				return fmt.Errorf("pgvector store: reading the bytes of the subject's rows in %s: %w", m.table, serverError(err))
			}
			f.addRow(vals, columns)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("pgvector store: reading the bytes of the subject's rows in %s: %w", m.table, noTable(serverError(err)))
		}
	}
	return nil
}

// storedColumn is a column whose values the scan looks for.
type storedColumn struct {
	name string
	storedType
}

// addRow adds one row read by readFingerprint: its ctid (vals[0] block,
// vals[1] line), then per column of columns its value as sent, its
// normalised value as sent (or nil) and whether it is stored compressed.
func (f *fingerprint) addRow(vals []any, columns []storedColumn) {
	f.records++
	var row rowVectors
	if blk, ok := vals[0].(int64); ok {
		f.blocks[blk] = true
		if line, ok := vals[1].(int32); ok && line > 0 && line <= 0xffff {
			f.lines[blk] = append(f.lines[blk], uint16(line))
			row.at = itemPointer{block: uint32(blk), line: uint16(line)}
		}
	}
	for i, col := range columns {
		asWritten, _ := vals[2+3*i].([]byte)
		normalised, _ := vals[3+3*i].([]byte)
		for _, sent := range [][]byte{asWritten, normalised} {
			if sent != nil {
				f.addStored(col.storedType, sent)
			}
		}
		if asWritten != nil && col.copies != nil {
			for _, c := range col.copies(asWritten) {
				f.addStored(storedTypes[c.typ], c.sent)
			}
		}
		if col.elemSize > 0 {
			row.keep(col.name, col.elemSize, asWritten, normalised)
		}
		if c, ok := vals[4+3*i].(bool); ok && c {
			f.compressed++
		}
	}
	f.keepVectors(row)
}
