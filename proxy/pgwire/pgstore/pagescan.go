package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/connector"
)

// PhysicalScan configures the page scan a layer runs after each forget
// (the table's physical: report): which pages of each relation it reads.
type PhysicalScan struct {
	// FullScanPages: a relation of at most this many pages is read whole.
	FullScanPages int64
	// SamplePages: of a larger relation, this many pages chosen at random
	// are read, beside the pages targeted: for the table itself the pages
	// its deleted rows were in, for its TOAST table the pages their
	// out-of-line values' chunks were in, for an HNSW or IVFFlat index
	// the pages their entries were in.
	SamplePages int64
	// TargetedPages caps the targeting per forget: at most this many heap
	// pages are read before the delete for the rows' TOAST pointers, at
	// most this many TOAST pages and pages of each vector index are
	// targeted, and the values of at most this many rows are kept for the
	// index searches; 0 targets none.
	TargetedPages int64
}

// DefaultPhysicalScan reads relations up to 262,144 pages (2 GiB) whole,
// and of larger ones 1,024 random pages beside the targeted pages (at most
// 8,192 of a TOAST table or a vector index). No page of another index
// is targeted (no map leads from a heap row to its btree or GIN
// entries); the bound is as high as a whole read that still fits in a
// forget (docs/forget.md, "Which pages").
var DefaultPhysicalScan = PhysicalScan{FullScanPages: 262144, SamplePages: 1024, TargetedPages: 8192}

// RawPageFunction is the function a store role that is not a superuser
// reads pages through (docs/forget.md gives its definition): a SECURITY
// DEFINER wrapper of pageinspect's get_raw_page, owned by a superuser,
// that reads only relations of tables the caller may SELECT from.
const RawPageFunction = "lethe_raw_page(regclass, bigint)"

// ErrNoPageAccess is returned when the store role cannot read raw pages.
var ErrNoPageAccess = errors.New("the store role cannot read raw pages: in PostgreSQL 15 pageinspect's get_raw_page " +
	"needs a superuser even with EXECUTE granted; as a superuser, create the function " + RawPageFunction +
	" given in docs/forget.md and GRANT EXECUTE ON FUNCTION " + RawPageFunction + " TO the store role " +
	"(or CREATE EXTENSION pageinspect and connect as a superuser)")

// pageReader is how pages are read: the query for a batch of blocks of one
// relation ($1 = the relation's oid, $2 = the block numbers).
type pageReader struct {
	method string
	query  string
}

// rawPageReader finds how this role can read pages: through
// lethe_raw_page when it may execute it, else get_raw_page when it is a
// superuser and pageinspect is installed.
func (s *Store) rawPageReader(ctx context.Context) (pageReader, error) {
	var wrapper, super, pageinspect bool
	err := s.pool.QueryRow(ctx, `
		SELECT coalesce(has_function_privilege(to_regprocedure('lethe_raw_page(regclass,bigint)'), 'EXECUTE'), false),
			(SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
			to_regprocedure('get_raw_page(text,text,bigint)') IS NOT NULL`).Scan(&wrapper, &super, &pageinspect)
	if err != nil {
		return pageReader{}, fmt.Errorf("pgvector store: finding how to read pages: %w", serverError(err))
	}
	switch {
	case wrapper:
		return pageReader{method: "lethe_raw_page (pageinspect's get_raw_page as its superuser owner, for tables the store role may SELECT from)",
			query: `SELECT b, lethe_raw_page($1::oid::regclass, b) FROM unnest($2::int8[]) AS b`}, nil
	case super && pageinspect:
		return pageReader{method: "pageinspect's get_raw_page (the store role is a superuser)",
			query: `SELECT b, get_raw_page($1::oid::regclass::text, 'main', b) FROM unnest($2::int8[]) AS b`}, nil
	case super:
		return pageReader{}, errors.New("pgvector store: the pageinspect extension is not installed in the store's database: CREATE EXTENSION pageinspect (as a superuser)")
	}
	return pageReader{}, fmt.Errorf("pgvector store: %w", ErrNoPageAccess)
}

// pageRelation is one relation of a table whose pages are scanned.
type pageRelation struct {
	oid   uint32
	name  string
	kind  string
	pages int64
	heap  bool // the table itself, whose deleted rows' blocks are known
}

// pageRelations lists t itself, its TOAST table and its TOAST table's index,
// and every index of t, with their size in pages.
func (s *Store) pageRelations(ctx context.Context, t Table) ([]pageRelation, error) {
	rows, err := s.pool.Query(ctx, `
		WITH tbl AS (SELECT c.oid, c.reltoastrelid FROM pg_class c WHERE c.oid = to_regclass($1)),
		rels AS (
			SELECT oid, 'heap' AS kind, true AS heap FROM tbl
			UNION ALL SELECT reltoastrelid, 'toast', false FROM tbl WHERE reltoastrelid <> 0
			UNION ALL SELECT i.indexrelid, am.amname, false FROM tbl JOIN pg_index i ON i.indrelid IN (tbl.oid, tbl.reltoastrelid)
				JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam)
		SELECT r.oid, r.oid::regclass::text, r.kind, r.heap,
			pg_relation_size(r.oid) / current_setting('block_size')::int8
		FROM rels r ORDER BY r.heap DESC, r.kind = 'toast' DESC, r.oid`, t.ident())
	if err != nil {
		return nil, fmt.Errorf("pgvector store: listing the relations of %s: %w", t, serverError(err))
	}
	var out []pageRelation
	var r pageRelation
	_, err = pgx.ForEachRow(rows, []any{&r.oid, &r.name, &r.kind, &r.heap, &r.pages}, func() error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: listing the relations of %s: %w", t, serverError(err))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pgvector store: %s: %w", t, connector.ErrAbsent)
	}
	return out, nil
}

// Coverage values of connector.RelationPages.
const (
	coverageAll    = "all"
	coverageSample = "targeted+sample"
)

// blocksToScan chooses the pages of r to read: all of them when r is
// small, else the targeted blocks (those past r's end are ignored) and a
// random sample.
func (p PhysicalScan) blocksToScan(r pageRelation, targeted map[int64]bool) ([]int64, string) {
	if r.pages <= p.FullScanPages {
		out := make([]int64, r.pages)
		for i := range out {
			out[i] = int64(i)
		}
		return out, coverageAll
	}
	set := map[int64]bool{}
	for b := range targeted {
		if b < r.pages {
			set[b] = true
		}
	}
	for n := int64(0); n < p.SamplePages && int64(len(set)) < r.pages; {
		if b := rand.Int64N(r.pages); !set[b] {
			set[b] = true
			n++
		}
	}
	out := make([]int64, 0, len(set))
	for b := range set {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, coverageSample
}

// pagesPerQuery is how many pages one query reads (8 kB each).
const pagesPerQuery = 256

// scanRelation reads blocks of r and counts those holding the bytes f
// looks for.
func (s *Store) scanRelation(ctx context.Context, reader pageReader, r pageRelation, blocks []int64, f *fingerprint) (connector.RelationPages, error) {
	out := connector.RelationPages{Relation: r.name, Kind: r.kind, Pages: r.pages}
	for start := 0; start < len(blocks); start += pagesPerQuery {
		batch := blocks[start:min(start+pagesPerQuery, len(blocks))]
		rows, err := s.pool.Query(ctx, reader.query, r.oid, batch)
		if err != nil {
			return out, fmt.Errorf("pgvector store: reading the pages of %s: %w", r.name, serverError(err))
		}
		var blk int64
		var page []byte
		_, err = pgx.ForEachRow(rows, []any{&blk, &page}, func() error {
			out.Scanned++
			vector, subject := f.match.find(page)
			if vector {
				out.HoldingVector++
			}
			if subject {
				out.HoldingSubject++
			}
			if vector || subject {
				out.Holding++
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("pgvector store: reading the pages of %s: %w", r.name, serverError(err))
		}
	}
	return out, nil
}

// scanPages looks for f's bytes in every relation of t, as p says.
func (s *Store) scanPages(ctx context.Context, t Table, p PhysicalScan, f *fingerprint) *connector.Physical {
	out := &connector.Physical{At: time.Now().UTC().Truncate(time.Millisecond)}
	reader, err := s.rawPageReader(ctx)
	if err != nil {
		out.Status, out.Reason = connector.PhysicalNotPossible, err.Error()
		return out
	}
	out.Method = reader.method + "; a page holds the records' bytes when it contains the subject's text or any " +
		fmt.Sprintf("%d-byte fragment (one every %d bytes) of a deleted vector as stored or L2-normalised", fragmentLen, fragmentStride)
	if f.compressed > 0 {
		out.Method += fmt.Sprintf("; %d vector values were stored compressed and cannot be recognised on pages", f.compressed)
	}
	rels, err := s.pageRelations(ctx, t)
	if err != nil {
		out.Status, out.Reason = connector.PhysicalNotPossible, err.Error()
		return out
	}
	for _, r := range rels {
		began := time.Now()
		blocks, coverage := p.blocksToScan(r, f.targets(r))
		rp, err := s.scanRelation(ctx, reader, r, blocks, f)
		if err != nil {
			out.Status, out.Reason, out.Relations = connector.PhysicalNotPossible, err.Error(), nil
			return out
		}
		rp.Coverage, rp.TookMS = coverage, time.Since(began).Milliseconds()
		out.Relations = append(out.Relations, rp)
		if coverage == coverageSample {
			out.Method += "; " + f.targetsText(r, p)
		}
	}
	out.Status = connector.PhysicalScanned
	return out
}

// readPages reads blocks of the relation oid in one query; a block past
// its end is absent from the result.
func (s *Store) readPages(ctx context.Context, reader pageReader, oid uint32, blocks []int64) (map[int64][]byte, error) {
	rows, err := s.pool.Query(ctx, reader.query, oid, blocks)
	if err != nil {
		return nil, fmt.Errorf("reading index pages: %w", serverError(err))
	}
	out := make(map[int64][]byte, len(blocks))
	var blk int64
	var page []byte
	_, err = pgx.ForEachRow(rows, []any{&blk, &page}, func() error {
		out[blk] = page
		page = nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading index pages: %w", serverError(err))
	}
	return out, nil
}
