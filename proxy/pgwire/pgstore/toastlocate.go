package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// toastTargets are the pages of a table's TOAST table that held the
// chunks of the values a forget deleted, found before the delete, which
// the scan of a TOAST table too large to read whole reads beside its
// sample. Block numbers and chunk ids only: nothing of the values.
type toastTargets struct {
	relation string         // the TOAST table, as the catalog names it
	blocks   map[int64]bool // its blocks holding the deleted values' chunks
	values   int            // TOAST pointers found in the deleted rows
	heapRead int64          // heap blocks read for their pointers
	// heapSkipped counts heap blocks of deleted rows not read for their
	// pointers and dropped the TOAST blocks not kept (both the cap),
	// missing the rows whose line pointer no longer held them.
	heapSkipped int64
	dropped     int64
	missing     int
	// indexPagesRead counts the TOAST index's pages read to find the
	// chunks, for a store role that may not query the TOAST table.
	indexPagesRead int64
	notLocated     reasons // why chunks were not targeted
}

// reasons says why something was not done, each reason once.
type reasons []string

func (r *reasons) add(reason string) {
	for _, known := range *r {
		if known == reason {
			return
		}
	}
	*r = append(*r, reason)
}

// toastTable is the TOAST table of a table and its size.
type toastTable struct {
	heapOID, oid uint32
	name         string
	pages        int64
}

// locateToast finds, for the rows f read since the last call (the rows
// Delete is about to delete), the TOAST blocks holding their out-of-line
// values, when the table's TOAST table is too large for scan to read
// whole: it reads the rows' heap pages, takes the TOAST pointers from the
// rows' tuples (toastValueIDs), and asks the TOAST table where those
// chunk ids are. It must run before the delete (the chunks are deleted
// with the rows, and a query no longer sees them). It reads at most
// scan.TargetedPages heap pages and keeps at most as many TOAST blocks per
// forget, and notes what it could not do in f.toast rather than failing.
func (s *Store) locateToast(ctx context.Context, t Table, scan PhysicalScan, f *fingerprint) {
	lines := f.lines
	f.lines = map[int64][]uint16{}
	if len(lines) == 0 {
		return
	}
	var tt toastTable
	err := s.pool.QueryRow(ctx, `
		SELECT c.oid, c.reltoastrelid, c.reltoastrelid::regclass::text,
			pg_relation_size(c.reltoastrelid) / current_setting('block_size')::int8
		FROM pg_class c WHERE c.oid = to_regclass($1) AND c.reltoastrelid <> 0`, t.ident()).Scan(&tt.heapOID, &tt.oid, &tt.name, &tt.pages)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return // no TOAST table: nothing is stored out of line
	case err != nil:
		f.toast.notLocated.add(fmt.Sprintf("finding the TOAST table: %v", serverError(err)))
		return
	case tt.pages <= scan.FullScanPages:
		return // read whole by the scan
	}
	f.toast.relation = tt.name
	if scan.TargetedPages <= 0 {
		f.toast.notLocated.add("the scan targets no page (TargetedPages 0)")
		return
	}
	reader, err := s.rawPageReader(ctx)
	if err != nil {
		return // the scan itself is not possible, and says why
	}
	ids, err := s.toastValuesOf(ctx, reader, tt, lines, scan.TargetedPages, &f.toast)
	if err != nil {
		f.toast.notLocated.add(err.Error())
		return
	}
	if len(ids) == 0 {
		return
	}
	blocks, err := s.chunkBlocks(ctx, tt, ids)
	if errors.Is(err, errToastRefused) {
		blocks, err = s.chunkBlocksFromIndex(ctx, reader, tt, ids, scan, err, &f.toast)
	}
	if err != nil {
		f.toast.notLocated.add(err.Error())
		return
	}
	if f.toast.blocks == nil {
		f.toast.blocks = map[int64]bool{}
	}
	for _, b := range blocks {
		switch {
		case f.toast.blocks[b]:
		case int64(len(f.toast.blocks)) < scan.TargetedPages:
			f.toast.blocks[b] = true
		default:
			f.toast.dropped++
		}
	}
}

// toastValuesOf reads the heap blocks of lines (at most budget of them
// over the forget, lowest first) and returns the chunk ids of the TOAST
// pointers into tt held by those rows.
func (s *Store) toastValuesOf(ctx context.Context, reader pageReader, tt toastTable, lines map[int64][]uint16, budget int64, acc *toastTargets) ([]uint32, error) {
	blocks := make([]int64, 0, len(lines))
	for b := range lines {
		blocks = append(blocks, b)
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i] < blocks[j] })
	if room := max(budget-acc.heapRead, 0); int64(len(blocks)) > room {
		acc.heapSkipped += int64(len(blocks)) - room
		blocks = blocks[:room]
	}
	acc.heapRead += int64(len(blocks))
	seen := map[uint32]bool{}
	var ids []uint32
	for start := 0; start < len(blocks); start += pagesPerQuery {
		batch := blocks[start:min(start+pagesPerQuery, len(blocks))]
		rows, err := s.pool.Query(ctx, reader.query, tt.heapOID, batch)
		if err != nil {
			return nil, fmt.Errorf("reading the deleted rows' heap pages: %w", serverError(err))
		}
		var blk int64
		var page []byte
		_, err = pgx.ForEachRow(rows, []any{&blk, &page}, func() error {
			found, missing, err := toastValueIDs(page, lines[blk], tt.oid)
			if err != nil {
				acc.missing += len(lines[blk])
				return nil
			}
			acc.missing += missing
			for _, id := range found {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the deleted rows' heap pages: %w", serverError(err))
		}
	}
	acc.values += len(ids)
	return ids, nil
}

// chunkBlocks asks the TOAST table tt which of its blocks hold the chunks
// of the values ids (through its index on chunk_id). It needs what a
// query of a TOAST table needs: USAGE on the schema pg_toast and SELECT on
// the TOAST table (its table's owner has the SELECT), or a superuser, or
// pg_read_all_data; the error for a role without them names those grants.
//
// ANALYZE skips TOAST tables, so the planner guesses the rows from the
// table's size (1.2 million for 400 chunks of a 20,000-page TOAST table,
// tried) and would compile the query with JIT, which costs more than the
// query: it is turned off for it.
func (s *Store) chunkBlocks(ctx context.Context, tt toastTable, ids []uint32) ([]int64, error) {
	var blocks []int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL jit = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT (ctid::text::point)[0]::int8 FROM `+tt.name+` WHERE chunk_id = ANY($1::oid[])`, ids)
		if err != nil {
			return err
		}
		blocks, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err != nil {
		return nil, chunkBlocksError(tt, err)
	}
	return blocks, nil
}

// errToastRefused is the error of a store role that may not query a
// TOAST table.
var errToastRefused = errors.New("the store role cannot read")

func chunkBlocksError(tt toastTable, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return fmt.Errorf("%[2]w %[1]s: GRANT USAGE ON SCHEMA pg_toast TO the store role and, "+
			"unless it owns the table, GRANT SELECT ON %[1]s TO it (or GRANT pg_read_all_data TO it)", tt.name, errToastRefused)
	}
	return fmt.Errorf("finding the deleted values' chunks in %s: %w", tt.name, serverError(err))
}

// chunkBlocksFromIndex finds the blocks of the chunks of ids by reading
// every page of tt's index with the page reader (toastIndexBlocks), for a
// store role that may not query tt (refused says so): it needs no grant
// beyond the page reader's, and reads the index whole, so only when the
// index is within the scan's bound.
func (s *Store) chunkBlocksFromIndex(ctx context.Context, reader pageReader, tt toastTable, ids []uint32, scan PhysicalScan, refused error, acc *toastTargets) ([]int64, error) {
	var index uint32
	var pages int64
	err := s.pool.QueryRow(ctx, `SELECT i.indexrelid, pg_relation_size(i.indexrelid) / current_setting('block_size')::int8
		FROM pg_index i WHERE i.indrelid = $1 ORDER BY i.indexrelid LIMIT 1`, tt.oid).Scan(&index, &pages)
	if err != nil {
		return nil, fmt.Errorf("%w; and finding its index to read instead: %v", refused, serverError(err))
	}
	if pages > scan.FullScanPages {
		return nil, fmt.Errorf("%w; its index, of %d pages, is over the scan's bound to be read instead", refused, pages)
	}
	want := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	seen := map[int64]bool{}
	var out []int64
	all := make([]int64, pages)
	for i := range all {
		all[i] = int64(i)
	}
	for start := 0; start < len(all); start += pagesPerQuery {
		rows, err := s.pool.Query(ctx, reader.query, index, all[start:min(start+pagesPerQuery, len(all))])
		if err != nil {
			return nil, fmt.Errorf("%w; and reading its index instead: %v", refused, serverError(err))
		}
		var blk int64
		var page []byte
		_, err = pgx.ForEachRow(rows, []any{&blk, &page}, func() error {
			found, err := toastIndexBlocks(page, want)
			if err != nil {
				return err
			}
			for _, b := range found {
				if !seen[b] {
					seen[b] = true
					out = append(out, b)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w; and reading its index instead: %v", refused, serverError(err))
		}
	}
	acc.indexPagesRead += pages
	return out, nil
}

// describe says, for the scan's method, which pages of the TOAST table
// were targeted and what was not, after head (the relation's name).
func (tt *toastTargets) describe(head string) string {
	var b strings.Builder
	if tt.relation == "" && len(tt.notLocated) == 0 {
		return head + ": no page targeted (the TOAST table was small enough to be read whole when the rows were deleted)"
	}
	fmt.Fprintf(&b, "%s: %d pages targeted, where the deleted rows' %d out-of-line values had their chunks "+
		"(from the TOAST pointers in the rows' heap tuples, read before the delete)", head, len(tt.blocks), tt.values)
	if tt.indexPagesRead > 0 {
		fmt.Fprintf(&b, "; found by reading %d pages of the TOAST table's index (the store role may not query the TOAST table)", tt.indexPagesRead)
	}
	if tt.dropped > 0 {
		fmt.Fprintf(&b, "; capped: %d more pages held them", tt.dropped)
	}
	if tt.heapSkipped > 0 {
		fmt.Fprintf(&b, "; capped: the rows in %d of %d heap pages were not read for their pointers", tt.heapSkipped, tt.heapSkipped+tt.heapRead)
	}
	if tt.missing > 0 {
		fmt.Fprintf(&b, "; %d rows had moved from their ctid when read", tt.missing)
	}
	for _, r := range tt.notLocated {
		b.WriteString("; TOAST chunks not targeted: " + r)
	}
	return b.String()
}
