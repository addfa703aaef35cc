package pgstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
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

// Vector element sizes of the pgvector types whose bytes the scan knows:
// on disk (vector.h, halfvec.h) a varlena header, int16 dim, int16 unused,
// then dim elements in the server's byte order; *_send writes the same
// fields big-endian.
var vectorElemSize = map[string]int{"vector": 4, "halfvec": 2}

const (
	// fragmentLen is the length of each vector fragment looked for, and
	// fragmentStride the distance between their starts: a TOAST chunk
	// (~2 kB) or an index tuple holding any part of a vector longer than a
	// stride holds at least one whole fragment.
	fragmentLen    = 16
	fragmentStride = 512
)

// addVector adds fragments of the vector whose binary send form is sent,
// as it is stored on a little-endian server (x86-64, arm64).
func (f *fingerprint) addVector(sent []byte, elem int) {
	if len(sent) < 4 {
		return
	}
	disk := make([]byte, len(sent))
	binary.LittleEndian.PutUint16(disk[0:], binary.BigEndian.Uint16(sent[0:]))
	binary.LittleEndian.PutUint16(disk[2:], binary.BigEndian.Uint16(sent[2:]))
	for i := 4; i+elem <= len(sent); i += elem {
		for j := 0; j < elem; j++ {
			disk[i+j] = sent[i+elem-1-j]
		}
	}
	data := disk[4:]
	if len(data) < fragmentLen {
		// A short vector: its header makes the few bytes more distinctive.
		f.match.add(disk, true)
		return
	}
	for off := 0; off+fragmentLen <= len(data); off += fragmentStride {
		f.match.add(data[off:off+fragmentLen], true)
	}
	if tail := len(data) - fragmentLen; tail%fragmentStride != 0 {
		f.match.add(data[tail:], true)
	}
}

// vectorColumns are t's columns of the types vectorElemSize knows, with
// their type.
func (s *Store) vectorColumns(ctx context.Context, t Table) (map[string]string, error) {
	types, err := s.columnTypes(ctx, t)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for col, typ := range types {
		if _, ok := vectorElemSize[typ]; ok {
			out[col] = typ
		}
	}
	return out, nil
}

// readFingerprint reads, for the rows m selects for subject and ids (the
// rows Delete is about to delete), their ctids and their vectors as
// stored, both as written and L2-normalised (the copy a cosine index
// keeps), and of a vector column its halfvec copies too (what an index on
// the column cast to halfvec keeps).
func (s *Store) readFingerprint(ctx context.Context, m Match, subject string, ids []string, f *fingerprint) error {
	cols, err := s.vectorColumns(ctx, m.table)
	if err != nil {
		return err
	}
	sel := []string{"(ctid::text::point)[0]::int8", "(ctid::text::point)[1]::int4"}
	var elems []int
	var names []string
	for col, typ := range cols {
		q := pgx.Identifier{col}.Sanitize()
		sel = append(sel, typ+"_send("+q+")", typ+"_send(l2_normalize("+q+"))",
			"(pg_column_compression("+q+") IS NOT NULL)")
		elems = append(elems, vectorElemSize[typ])
		names = append(names, col)
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
			f.records++
			var row rowVectors
			if blk, ok := vals[0].(int64); ok {
				f.blocks[blk] = true
				if line, ok := vals[1].(int32); ok && line > 0 && line <= 0xffff {
					f.lines[blk] = append(f.lines[blk], uint16(line))
					row.at = itemPointer{block: uint32(blk), line: uint16(line)}
				}
			}
			for i, elem := range elems {
				for _, v := range vals[2+3*i : 4+3*i] {
					if b, ok := v.([]byte); ok {
						f.addVector(b, elem)
					}
				}
				if b, ok := vals[2+3*i].([]byte); ok && elem == 4 {
					asHalf, normalised := halfCopies(b)
					f.addVector(asHalf, 2)
					f.addVector(normalised, 2)
				}
				row.keep(names[i], elem, vals[2+3*i], vals[3+3*i])
				if c, ok := vals[4+3*i].(bool); ok && c {
					f.compressed++
				}
			}
			f.keepVectors(row)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("pgvector store: reading the bytes of the subject's rows in %s: %w", m.table, noTable(serverError(err)))
		}
	}
	return nil
}

// halfCopies returns, in the binary send form of halfvec, the vector
// whose send form is sent cast to halfvec, and that copy L2-normalised,
// as pgvector computes them (each element rounded to nearest even; the
// norm in float64 over the half values, each quotient rounded to float4,
// then to half): what an expression index on the column cast to halfvec
// stores, normalised for a cosine operator class.
func halfCopies(sent []byte) (asHalf, normalised []byte) {
	values := sentValues(sent, 4)
	asHalf, normalised = make([]byte, 4+2*len(values)), make([]byte, 4+2*len(values))
	copy(asHalf, sent[:4])
	copy(normalised, sent[:4])
	var norm float64
	for i, v := range values {
		h := floatToHalf(v)
		binary.BigEndian.PutUint16(asHalf[4+2*i:], h)
		x := float64(halfToFloat(h))
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range values {
		x := float64(halfToFloat(binary.BigEndian.Uint16(asHalf[4+2*i:])))
		if norm > 0 {
			x /= norm
		}
		binary.BigEndian.PutUint16(normalised[4+2*i:], floatToHalf(float32(x)))
	}
	return asHalf, normalised
}
