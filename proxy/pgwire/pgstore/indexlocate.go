package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// rowVectors is a deleted row's heap address and its vector values, by
// column: what a walk of a vector index needs to find the row's element.
// Memory only, dropped once looked for.
type rowVectors struct {
	at     itemPointer
	values map[string]sentVector
}

// sentVector is a vector value in its binary send form, as written and
// L2-normalised, and the size of its elements (storedType.elemSize).
type sentVector struct {
	asWritten, normalised []byte
	elemSize              int
}

func (r *rowVectors) keep(column string, elemSize int, asWritten, normalised []byte) {
	if asWritten == nil {
		return
	}
	if r.values == nil {
		r.values = map[string]sentVector{}
	}
	r.values[column] = sentVector{asWritten: asWritten, normalised: normalised, elemSize: elemSize}
}

// query is the value a walk of an index comparing as d looks for.
func (v sentVector) query(d indexDistance) []float32 {
	if d.normalise {
		return sentValues(v.normalised, v.elemSize)
	}
	return sentValues(v.asWritten, v.elemSize)
}

// keepVectors keeps row for locateVectorIndexes, up to f.vectorsKept rows.
func (f *fingerprint) keepVectors(row rowVectors) {
	switch {
	case row.at.line == 0 || len(row.values) == 0:
	case len(f.vectors) < f.vectorsKept:
		f.vectors = append(f.vectors, row)
	default:
		f.vectorsSkipped++
	}
}

// indexTargets are the pages of a vector index that held the entries of
// the rows a forget deleted, found before the delete, which the scan of an
// index too large to read whole reads beside its sample. Block numbers
// only: nothing of the values.
type indexTargets struct {
	kind       string // the index's access method: hnsw or ivfflat
	blocks     map[int64]bool
	rows       int   // rows looked for
	located    int   // rows whose element was found
	pagesRead  int64 // index pages read by the walks
	took       time.Duration
	nearby     int     // rows whose element no walk reached, found on nearby pages
	dropped    int     // elements found past the cap
	notLocated reasons // why entries were not targeted
}

// vectorIndex is an HNSW or IVFFlat index of a table and what finding
// entries in it needs.
type vectorIndex struct {
	oid     uint32
	name    string
	kind    string // hnsw or ivfflat
	opclass string
	pages   int64
	columns []string // the table's columns its key depends on
}

// indexPagesPerRow bounds a forget's reading of one vector index to find
// its rows' entries: at most this many pages per row looked for (a walk of
// a million-element HNSW index reads about a thousand).
const indexPagesPerRow = 4096

// locateVectorIndexes finds, for the rows f read since the last call (the
// rows Delete is about to delete), the blocks of the table's vector
// indexes too large to scan whole that hold their entries: of an HNSW
// index by walking its graph towards each row's value until it reaches
// the element pointing at the row's ctid (hnswWalk), of an IVFFlat index
// by reading the lists nearest the value (ivfflatSearch). It must run
// before the delete and any vacuum (a vacuum frees the entries of deleted
// rows). It keeps at most scan.TargetedPages blocks per index and notes
// what it could not do in f.indexes rather than failing.
func (s *Store) locateVectorIndexes(ctx context.Context, t Table, scan PhysicalScan, f *fingerprint) {
	rows := f.vectors
	f.vectors = nil
	if len(rows) == 0 && f.vectorsSkipped == 0 {
		return
	}
	indexes, err := s.vectorIndexes(ctx, t, scan.FullScanPages)
	if err != nil || len(indexes) == 0 {
		return // a failure here leaves the sample, which the scan states
	}
	if f.indexes == nil {
		f.indexes = map[uint32]*indexTargets{}
	}
	reader, readerErr := s.rawPageReader(ctx)
	for _, ix := range indexes {
		targets := f.indexes[ix.oid]
		if targets == nil {
			targets = &indexTargets{blocks: map[int64]bool{}, kind: ix.kind}
			f.indexes[ix.oid] = targets
		}
		targets.rows += len(rows)
		if scan.TargetedPages <= 0 {
			targets.notLocated.add("the scan targets no page (TargetedPages 0)")
			continue
		}
		if f.vectorsSkipped > 0 {
			targets.notLocated.add(fmt.Sprintf("capped: %d rows beyond the first %d were not looked for", f.vectorsSkipped, f.vectorsKept))
		}
		if readerErr != nil {
			return // the scan itself is not possible, and says why
		}
		s.locateIn(ctx, reader, ix, rows, scan, targets)
	}
}

// locateIn looks for the entries of rows in the index ix.
func (s *Store) locateIn(ctx context.Context, reader pageReader, ix vectorIndex, rows []rowVectors, scan PhysicalScan, targets *indexTargets) {
	distance, ok := distanceOf(ix.opclass)
	if !ok {
		targets.notLocated.add(fmt.Sprintf("the operator class %s compares values this search cannot", ix.opclass))
		return
	}
	if len(ix.columns) != 1 {
		targets.notLocated.add(fmt.Sprintf("its key depends on %d vector columns, not one", len(ix.columns)))
		return
	}
	pages := &indexPages{cached: map[uint32][]byte{}, budget: indexPagesPerRow * int64(len(rows)), size: uint32(ix.pages),
		read: func(ctx context.Context, blocks []int64) (map[int64][]byte, error) {
			return s.readPages(ctx, reader, ix.oid, blocks)
		}}
	began := time.Now()
	defer func() {
		targets.pagesRead, targets.took = targets.pagesRead+pages.reads, targets.took+time.Since(began)
	}()
	queries := make([]rowQuery, 0, len(rows))
	for _, row := range rows {
		if value, ok := row.values[ix.columns[0]]; ok {
			queries = append(queries, rowQuery{at: row.at, value: value.query(distance)})
		}
	}
	found, err := locateEntries(ctx, ix.kind, pages, distance, queries, targets)
	blocks := make([]int64, 0, len(found))
	for _, block := range found {
		blocks = append(blocks, int64(block))
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i] < blocks[j] })
	for _, block := range blocks {
		targets.located++
		switch {
		case targets.blocks[block]:
		case int64(len(targets.blocks)) >= scan.TargetedPages:
			targets.dropped++
		default:
			targets.blocks[block] = true
		}
	}
	switch {
	case errors.Is(err, errPageBudget):
		targets.notLocated.add(fmt.Sprintf("capped: the search may read %d pages per row", indexPagesPerRow))
	case err != nil:
		targets.notLocated.add(err.Error())
	}
}

// locateEntries reads the metapage of an index of kind and finds the
// block of each row's entry in it.
func locateEntries(ctx context.Context, kind string, pages *indexPages, distance indexDistance, rows []rowQuery, targets *indexTargets) (map[itemPointer]uint32, error) {
	if err := pages.load(ctx, []uint32{0}); err != nil {
		return nil, fmt.Errorf("reading its metapage: %w", err)
	}
	if kind == "ivfflat" {
		meta, err := parseIVFFlatMeta(pages.cached[0])
		if err != nil {
			return nil, fmt.Errorf("reading its metapage: %w", err)
		}
		search := &ivfflatSearch{pages: pages, distance: distance}
		if err := search.readLists(ctx, meta.lists); err != nil {
			return nil, fmt.Errorf("reading its lists: %w", err)
		}
		return search.locate(ctx, rows)
	}
	meta, err := parseHNSWMeta(pages.cached[0])
	if err != nil {
		return nil, fmt.Errorf("reading its metapage: %w", err)
	}
	walk := &hnswWalk{pages: pages, meta: meta, distance: distance}
	found, nearby, err := walk.locate(ctx, rows)
	targets.nearby += nearby
	return found, err
}

// vectorIndexes lists t's HNSW and IVFFlat indexes over bound pages,
// with the vector columns their key depends on (a column, or the columns
// of an expression such as a cast to halfvec).
func (s *Store) vectorIndexes(ctx context.Context, t Table, bound int64) ([]vectorIndex, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT i.indexrelid, i.indexrelid::regclass::text, am.amname::text, opc.opcname::text,
			pg_relation_size(i.indexrelid) / current_setting('block_size')::int8,
			ARRAY(SELECT a.attname::text FROM pg_depend d
				JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
				JOIN pg_type ty ON ty.oid = a.atttypid
				WHERE d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
				  AND d.refclassid = 'pg_class'::regclass AND d.refobjid = i.indrelid AND d.refobjsubid > 0
				  AND ty.typname IN ('vector', 'halfvec')
				ORDER BY a.attnum)
		FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_am am ON am.oid = ic.relam
		JOIN pg_opclass opc ON opc.oid = i.indclass[0]
		WHERE i.indrelid = to_regclass($1) AND am.amname IN ('hnsw', 'ivfflat')
		  AND pg_relation_size(i.indexrelid) / current_setting('block_size')::int8 > $2`, t.ident(), bound)
	if err != nil {
		return nil, fmt.Errorf("pgvector store: listing the vector indexes of %s: %w", t, serverError(err))
	}
	var out []vectorIndex
	var ix vectorIndex
	_, err = pgx.ForEachRow(rows, []any{&ix.oid, &ix.name, &ix.kind, &ix.opclass, &ix.pages, &ix.columns}, func() error {
		out = append(out, ix)
		ix = vectorIndex{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: listing the vector indexes of %s: %w", t, serverError(err))
	}
	return out, nil
}

// describe says, for the scan's method, which pages of a vector index
// were targeted and what was not, after head (the relation's name).
func (it *indexTargets) describe(head string) string {
	if it == nil {
		return head + ": no page targeted (when the rows were deleted the index was not listed over the scan's bound: smaller then, made since, or the catalog could not be read)"
	}
	how := "walking the graph towards each row's value"
	if it.kind == "ivfflat" {
		how = "reading the lists whose centers are nearest each row's value"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d pages targeted, where the entries of %d of the %d deleted rows were "+
		"(found before the delete by %s: %d index pages read in %d ms)",
		head, len(it.blocks), it.located, it.rows, how, it.pagesRead, it.took.Milliseconds())
	if it.nearby > 0 {
		fmt.Fprintf(&b, "; %d of them no walk reached, found on the index pages around the elements of the rows beside them in the heap", it.nearby)
	}
	if it.dropped > 0 {
		fmt.Fprintf(&b, "; capped: %d more entries were found and not targeted", it.dropped)
	}
	for _, r := range it.notLocated {
		b.WriteString("; entries not targeted: " + r)
	}
	return b.String()
}
