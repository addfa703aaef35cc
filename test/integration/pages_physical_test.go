//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// pagesPerson is one person's rows in a physical-scan test table: their
// subject and the vectors written for them, kept by the test to recognise
// their bytes on pages independently of the layer.
type pagesPerson struct {
	subject string
	vectors [][]float32
}

// pagesTable creates table (dropping it at the end) with a bigint id, an
// owner text column and a vector(dims) column, and writes rows for each
// person; index is the DDL of the indexes to build ("" for none), with
// %s for the table.
func pagesTable(t *testing.T, direct *pgx.Conn, table string, dims int, index string, people ...*pagesPerson) {
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`)
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	_, err = direct.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (id bigint PRIMARY KEY, owner text, embedding vector(%[2]d))`, table, dims))
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS `+table) })
	if index != "" {
		_, err = direct.Exec(ctx, fmt.Sprintf(index, table))
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(27, uint64(len(table))))
	id := 0
	for _, p := range people {
		for i := range p.vectors {
			v := make([]float32, dims)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			p.vectors[i] = v
			id++
			_, err = direct.Exec(ctx, `INSERT INTO `+table+` (id, owner, embedding) VALUES ($1, $2, $3::text::vector)`, id, p.subject, pagesVectorText(v))
			require.NoError(t, err)
		}
	}
	awaitNoOlderSnapshot(t, direct)
}

// awaitNoOlderSnapshot waits (up to 30 s) until no other session of the
// database holds a snapshot or a transaction id: VACUUM keeps every row
// such a session might still see, so one left by an earlier test (a
// killed proxy's backend on its way out) would keep the bytes a test
// expects VACUUM to remove. It fails naming the sessions.
func awaitNoOlderSnapshot(t *testing.T, direct *pgx.Conn) {
	t.Helper()
	ctx := ctxT(t)
	var holders string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		require.NoError(t, direct.QueryRow(ctx, `SELECT coalesce(string_agg(format('pid %s (%s, %s, since %s)', pid, backend_type, state, xact_start), '; '), '')
			FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
			AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)`).Scan(&holders))
		if holders == "" {
			return
		}
	}
	t.Fatalf("other sessions still hold snapshots, which keep the deleted rows from VACUUM: %s", holders)
}

func pagesVectorText(v []float32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// diskRuns are the test's own reading of how a vector sits on a page:
// float4 little-endian as written, and again L2-normalised (the copy a
// cosine index keeps: float32(x / norm) with the norm in float64, as
// pgvector's l2_normalize computes it); every run of 4 consecutive
// elements of either.
func diskRuns(vectors [][]float32) map[string]bool {
	runs := map[string]bool{}
	for _, v := range vectors {
		var norm float64
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		norm = math.Sqrt(norm)
		raw, unit := make([]byte, 4*len(v)), make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
			binary.LittleEndian.PutUint32(unit[4*i:], math.Float32bits(float32(float64(x)/norm)))
		}
		for i := 0; i+16 <= len(raw); i += 4 {
			runs[string(raw[i:i+16])], runs[string(unit[i:i+16])] = true, true
		}
	}
	return runs
}

// pagesFound is what the test's own scan of one relation found.
type pagesFound struct{ pages, holding, vector, subject int64 }

// scanEveryPage reads every page of table, its TOAST table and all their
// indexes as the superuser with pageinspect, and counts the pages holding
// any of runs or the subject's text, by relation name.
func scanEveryPage(t *testing.T, direct *pgx.Conn, table string, runs map[string]bool, subject string) map[string]pagesFound {
	ctx := ctxT(t)
	rows, err := direct.Query(ctx, `
		SELECT c.oid::regclass::text, pg_relation_size(c.oid) / 8192 FROM pg_class c
		WHERE c.oid = $1::regclass OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = $1::regclass)
			OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass
				OR indrelid = (SELECT reltoastrelid FROM pg_class WHERE oid = $1::regclass))`, table)
	require.NoError(t, err)
	sizes := map[string]int64{}
	var name string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error { sizes[name] = n; return nil })
	require.NoError(t, err)
	out := map[string]pagesFound{}
	for rel, pages := range sizes {
		f := pagesFound{pages: pages}
		for blk := int64(0); blk < pages; blk++ {
			var page []byte
			require.NoError(t, direct.QueryRow(ctx, `SELECT get_raw_page($1, 'main', $2)`, rel, blk).Scan(&page))
			vec := false
			for i := 0; i+16 <= len(page) && !vec; i++ {
				vec = runs[string(page[i:i+16])]
			}
			sub := bytes.Contains(page, []byte(subject))
			if vec {
				f.vector++
			}
			if sub {
				f.subject++
			}
			if vec || sub {
				f.holding++
			}
		}
		out[rel] = f
	}
	return out
}

// requireSameCounts checks the layer's report against the test's own scan,
// relation by relation.
func requireSameCounts(t *testing.T, got *connector.Physical, want map[string]pagesFound) {
	t.Helper()
	require.Equal(t, connector.PhysicalScanned, got.Status, got.Reason)
	seen := map[string]bool{}
	for _, r := range got.Relations {
		w, ok := want[r.Relation]
		require.True(t, ok, "the layer scanned %s, which the test does not know", r.Relation)
		seen[r.Relation] = true
		t.Logf("%-40s %-8s pages %4d scanned %4d holding %4d (vector %4d, subject %4d) %s",
			r.Relation, r.Kind, r.Pages, r.Scanned, r.Holding, r.HoldingVector, r.HoldingSubject, r.Coverage)
		require.Equal(t, "all", r.Coverage, r.Relation)
		require.Equal(t, w.pages, r.Pages, "%s: pages", r.Relation)
		require.Equal(t, w.pages, r.Scanned, "%s: pages scanned", r.Relation)
		require.Equal(t, w.holding, r.Holding, "%s: pages holding the bytes", r.Relation)
		require.Equal(t, w.vector, r.HoldingVector, "%s: pages holding vector bytes", r.Relation)
		require.Equal(t, w.subject, r.HoldingSubject, "%s: pages holding the subject", r.Relation)
	}
	for rel := range want {
		require.True(t, seen[rel], "the layer did not scan %s", rel)
	}
}

// forgetPhysically deletes subject's rows through a layer (vacuum: its
// table's vacuum setting) that scans as scan says and, when steps is not
// nil, runs those physical steps; then verifies, cleans up and runs the
// physical step, as the engine does.
func forgetPhysically(t *testing.T, store *pgstore.Store, table pgstore.Table, vacuum bool, scan pgstore.PhysicalScan,
	steps *pgstore.PhysicalSteps, subject string) (int, *connector.Physical) {
	ctx := ctxT(t)
	layer, err := pgstore.NewLayer(ctx, store, table, vacuum)
	require.NoError(t, err)
	layer.ReportPhysical(scan)
	if steps != nil {
		layer.RemovePhysical(*steps)
	}
	deleted, err := layer.Delete(ctx, subject, nil, nil)
	require.NoError(t, err)
	a, err := layer.Residual(ctx, subject, nil)
	require.NoError(t, err)
	require.Zero(t, a.Residual, "forget itself completes")
	require.NoError(t, layer.Cleanup(ctx))
	return len(deleted), layer.Physical(ctx, subject)
}

// forgetWithScan is forgetPhysically with the default scan and no steps.
func forgetWithScan(t *testing.T, store *pgstore.Store, table pgstore.Table, vacuum bool, subject string) (int, *connector.Physical) {
	return forgetPhysically(t, store, table, vacuum, pgstore.DefaultPhysicalScan, nil, subject)
}

func pagesRule(name string) pgstore.Table {
	return pgstore.Table{Schema: "public", Name: name, ID: "id", Subjects: []pgstore.Subject{{Column: "owner"}}}
}

const pagesIndexes = `CREATE INDEX ON %[1]s USING hnsw (embedding vector_cosine_ops); CREATE INDEX ON %[1]s (owner)`

// TestPhysical_ReportCountsWhatAnIndependentScanFinds forgets one of two
// people from a table with an HNSW (cosine) index, a btree on the subject
// and TOASTed vectors (768 dimensions), and checks the layer's page counts
// against the test's own reading of every page: they are equal, and they
// show the residue a DELETE leaves (dead heap tuples, TOAST chunks, HNSW
// elements, btree keys), which the scan reports rather than hides.
func TestPhysical_ReportCountsWhatAnIndependentScanFinds(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-forgotten-7f3a9c", vectors: make([][]float32, 30)}
	kept := &pagesPerson{subject: "pages-kept-91bc44", vectors: make([][]float32, 300)}
	pagesTable(t, direct, "pages_report", 768, pagesIndexes, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithScan(t, store, pagesRule("pages_report"), false, gone.subject)
	require.Equal(t, 30, deleted)
	want := scanEveryPage(t, direct, "pages_report", diskRuns(gone.vectors), gone.subject)
	requireSameCounts(t, got, want)
	byKind := map[string]int64{}
	for _, r := range got.Relations {
		byKind[r.Kind] += r.HoldingVector
	}
	require.Positive(t, byKind["hnsw"], "HNSW keeps deleted elements until a vacuum: the scan must see them")
	require.Positive(t, byKind["toast"], "a DELETE leaves the TOAST chunks of 768-dimension vectors")
	require.Positive(t, got.Holding())
	require.Contains(t, got.Method, "get_raw_page")

	// The kept person's rows still answer through the index.
	var n int
	_, err = direct.Exec(ctx, `SET enable_seqscan = off`)
	require.NoError(t, err)
	defer direct.Exec(context.Background(), `RESET enable_seqscan`)
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM (SELECT id FROM pages_report WHERE owner = $1
		ORDER BY embedding <=> $2::text::vector LIMIT 5) s`, kept.subject, pagesVectorText(kept.vectors[0])).Scan(&n))
	require.Equal(t, 5, n)
}

// TestPhysical_ReportAfterVacuum does the same with the table's vacuum:
// true (VACUUM (INDEX_CLEANUP ON) before the scan) and reports what the
// scan then finds, again equal to the test's own reading.
func TestPhysical_ReportAfterVacuum(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-vacuumed-52d1e0", vectors: make([][]float32, 30)}
	kept := &pagesPerson{subject: "pages-stays-0a8f13", vectors: make([][]float32, 300)}
	pagesTable(t, direct, "pages_vacuum", 768, pagesIndexes, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	_, got := forgetWithScan(t, store, pagesRule("pages_vacuum"), true, gone.subject)
	requireSameCounts(t, got, scanEveryPage(t, direct, "pages_vacuum", diskRuns(gone.vectors), gone.subject))
	for _, r := range got.Relations {
		if r.Kind == "hnsw" {
			require.Zero(t, r.HoldingVector, "VACUUM (INDEX_CLEANUP ON) zeroes deleted HNSW elements (hnswvacuum.c)")
		}
	}
}

// TestPhysical_TableWithoutVectorIndex scans a table whose vectors have no
// index (heap, TOAST and the primary key only).
func TestPhysical_TableWithoutVectorIndex(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-noindex-3e77b2", vectors: make([][]float32, 5)}
	kept := &pagesPerson{subject: "pages-noindex-kept-c41d", vectors: make([][]float32, 20)}
	pagesTable(t, direct, "pages_noindex", 768, "", gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	_, got := forgetWithScan(t, store, pagesRule("pages_noindex"), false, gone.subject)
	want := scanEveryPage(t, direct, "pages_noindex", diskRuns(gone.vectors), gone.subject)
	requireSameCounts(t, got, want)
	for _, r := range got.Relations {
		require.NotEqual(t, "hnsw", r.Kind)
	}
}

// TestPhysical_ZeroRecords: a forget of a subject with no rows has nothing
// to look for, and says so.
func TestPhysical_ZeroRecords(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	kept := &pagesPerson{subject: "pages-zero-kept-6b0e", vectors: make([][]float32, 3)}
	pagesTable(t, direct, "pages_zero", 8, pagesIndexes, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithScan(t, store, pagesRule("pages_zero"), false, "pages-nobody-here")
	require.Zero(t, deleted)
	require.Equal(t, connector.PhysicalNothingDeleted, got.Status)
	require.Empty(t, got.Relations)
}

// TestPhysical_RoleWithoutPageGrant: a store role that is no superuser
// and may not execute lethe_raw_page still forgets; the scan's result says
// it was not possible and names the grant.
func TestPhysical_RoleWithoutPageGrant(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-nogrant-aa19", vectors: make([][]float32, 3)}
	pagesTable(t, direct, "pages_nogrant", 8, pagesIndexes, gone)
	_, err := direct.Exec(ctx, `DROP ROLE IF EXISTS pages_nogrant_role; CREATE ROLE pages_nogrant_role LOGIN PASSWORD 'pages-pw';
		GRANT SELECT, DELETE ON pages_nogrant TO pages_nogrant_role`)
	require.NoError(t, err)
	t.Cleanup(func() {
		direct.Exec(context.Background(), `DROP TABLE IF EXISTS pages_nogrant; DROP ROLE IF EXISTS pages_nogrant_role`)
	})

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable user=pages_nogrant_role password=pages-pw"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithScan(t, store, pagesRule("pages_nogrant"), false, gone.subject)
	require.Equal(t, 3, deleted)
	require.Equal(t, connector.PhysicalNotPossible, got.Status)
	require.Contains(t, got.Reason, "GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint)")
	require.NotContains(t, got.Reason, gone.subject)
	require.Empty(t, got.Relations)
}

// TestPhysical_RawPageFunctionForARoleThatIsNoSuperuser: with
// lethe_raw_page installed and EXECUTE granted, a role that is no
// superuser scans as a superuser would (the same counts as the test's own
// reading), and the function refuses a table the role may not SELECT from.
func TestPhysical_RawPageFunctionForARoleThatIsNoSuperuser(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-wrapper-d7e2", vectors: make([][]float32, 10)}
	kept := &pagesPerson{subject: "pages-wrapper-kept-19c0", vectors: make([][]float32, 40)}
	pagesTable(t, direct, "pages_wrapper", 768, pagesIndexes, gone, kept)
	pagesTable(t, direct, "pages_wrapper_other", 8, "")
	_, err := direct.Exec(ctx, pgstore.RawPageFunctionSQL)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `DROP ROLE IF EXISTS pages_wrapper_role; CREATE ROLE pages_wrapper_role LOGIN PASSWORD 'pages-pw';
		GRANT SELECT, DELETE ON pages_wrapper TO pages_wrapper_role;
		GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) TO pages_wrapper_role`)
	require.NoError(t, err)
	t.Cleanup(func() {
		direct.Exec(context.Background(), `DROP TABLE IF EXISTS pages_wrapper; DROP FUNCTION IF EXISTS lethe_raw_page(regclass, bigint);
			DROP ROLE IF EXISTS pages_wrapper_role`)
	})

	dsn := db.DSN(db.Addr(), "sslmode=disable user=pages_wrapper_role password=pages-pw")
	store, err := pgstore.Open(ctx, dsn)
	require.NoError(t, err)
	defer store.Close()
	_, got := forgetWithScan(t, store, pagesRule("pages_wrapper"), false, gone.subject)
	requireSameCounts(t, got, scanEveryPage(t, direct, "pages_wrapper", diskRuns(gone.vectors), gone.subject))
	require.Contains(t, got.Method, "lethe_raw_page")
	require.Positive(t, got.Holding())

	role := connect(t, "postgres://pages_wrapper_role:pages-pw@"+db.Addr()+"/"+db.DB+"?sslmode=disable")
	var page []byte
	err = role.QueryRow(ctx, `SELECT lethe_raw_page('pages_wrapper_other'::regclass, 0)`).Scan(&page)
	require.ErrorContains(t, err, "may not SELECT from pages_wrapper_other")
	err = role.QueryRow(ctx, `SELECT get_raw_page('pages_wrapper', 'main', 0)`).Scan(&page)
	require.ErrorContains(t, err, "must be superuser", "pageinspect itself stays closed to the role")
}

// TestPhysical_SuperuserWithoutPageinspect: in a database without the
// pageinspect extension, the scan is not possible and says which
// statement makes it so; the forget completes.
func TestPhysical_SuperuserWithoutPageinspect(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `DROP DATABASE IF EXISTS pages_noext`)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `CREATE DATABASE pages_noext`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP DATABASE IF EXISTS pages_noext WITH (FORCE)`) })
	other := connect(t, fmt.Sprintf("postgres://%s:%s@%s/pages_noext", db.User, db.Password, db.Addr()))
	_, err = other.Exec(ctx, `CREATE EXTENSION vector; CREATE TABLE pages_noext_docs (id bigint PRIMARY KEY, owner text, embedding vector(3));
		INSERT INTO pages_noext_docs VALUES (1, 'pages-noext-subject', '[1,2,3]')`)
	require.NoError(t, err)
	other.Close(ctx)

	store, err := pgstore.Open(ctx, fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=pages_noext sslmode=disable",
		db.Host, db.Port, db.User, db.Password))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithScan(t, store, pagesRule("pages_noext_docs"), false, "pages-noext-subject")
	require.Equal(t, 1, deleted)
	require.Equal(t, connector.PhysicalNotPossible, got.Status)
	require.Contains(t, got.Reason, "CREATE EXTENSION pageinspect")
}

// TestPhysical_FullForgetStatusCarriesTheScan runs a whole forget through
// the engine with a physical: report layer: the request completes, and its
// status carries the layer's page counts, equal to the test's own reading.
func TestPhysical_FullForgetStatusCarriesTheScan(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "pages-engine-4c1b0f", vectors: make([][]float32, 12)}
	kept := &pagesPerson{subject: "pages-engine-kept-e93a", vectors: make([][]float32, 60)}
	pagesTable(t, direct, "pages_engine", 768, pagesIndexes, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	layer, err := pgstore.NewLayer(ctx, store, pagesRule("pages_engine"), false)
	require.NoError(t, err)
	layer.ReportPhysical(pgstore.DefaultPhysicalScan)
	rig := enginetest.New(t, time.Hour, layer)
	id := rig.Forget(t, gone.subject)
	st, err := rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status, st.Error)
	require.Len(t, st.Layers, 1)
	require.Equal(t, 12, st.Layers[0].Deleted)
	require.NotNil(t, st.Layers[0].Physical)
	requireSameCounts(t, st.Layers[0].Physical, scanEveryPage(t, direct, "pages_engine", diskRuns(gone.vectors), gone.subject))
	require.Positive(t, st.Layers[0].Physical.Holding())
}

// TestPhysical_HalfvecColumn: a halfvec column's bytes (2-byte elements)
// are recognised in the heap and its HNSW index. The test reads each
// vector's stored form from the server (halfvec_send, as written and
// L2-normalised, turned little-endian here) before the delete and looks
// for every run of 8 elements on every page itself.
func TestPhysical_HalfvecColumn(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`)
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	_, err = direct.Exec(ctx, `DROP TABLE IF EXISTS pages_half; CREATE TABLE pages_half (id bigint PRIMARY KEY, owner text, embedding halfvec(256));
		INSERT INTO pages_half SELECT i, CASE WHEN i <= 10 THEN 'pages-half-gone-81d2' ELSE 'pages-half-kept-' || i END,
			array(SELECT random() - 0.5 + i * 0 FROM generate_series(1, 256))::real[]::halfvec(256) FROM generate_series(1, 100) AS i;
		CREATE INDEX ON pages_half USING hnsw (embedding halfvec_cosine_ops)`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS pages_half`) })
	const subject = "pages-half-gone-81d2"
	rows, err := direct.Query(ctx, `SELECT halfvec_send(embedding), halfvec_send(l2_normalize(embedding)) FROM pages_half WHERE owner = $1`, subject)
	require.NoError(t, err)
	runs := map[string]bool{}
	var raw, unit []byte
	_, err = pgx.ForEachRow(rows, []any{&raw, &unit}, func() error {
		for _, sent := range [][]byte{raw, unit} {
			disk := make([]byte, len(sent)-4)
			for i := 0; i+1 < len(disk); i += 2 {
				disk[i], disk[i+1] = sent[4+i+1], sent[4+i]
			}
			for i := 0; i+16 <= len(disk); i += 2 {
				runs[string(disk[i:i+16])] = true
			}
		}
		return nil
	})
	require.NoError(t, err)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithScan(t, store, pagesRule("pages_half"), false, subject)
	require.Equal(t, 10, deleted)
	requireSameCounts(t, got, scanEveryPage(t, direct, "pages_half", runs, subject))
	for _, r := range got.Relations {
		if r.Kind == "hnsw" {
			require.Positive(t, r.HoldingVector, "HNSW keeps the deleted halfvec elements")
		}
	}
}

// TestPhysical_IVFFlatAndGIN: a subject in a jsonb path with a GIN index
// (jsonb_ops keeps the strings themselves as keys) and vectors in an
// IVFFlat (cosine) index: the layer's counts equal the test's own reading,
// and both indexes are seen to keep the deleted person's bytes.
func TestPhysical_IVFFlatAndGIN(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`)
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	_, err = direct.Exec(ctx, `DROP TABLE IF EXISTS pages_ivf; CREATE TABLE pages_ivf (id bigint PRIMARY KEY, meta jsonb, embedding vector(64))`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS pages_ivf`) })
	gone := &pagesPerson{subject: "pages-ivf-gone-5a0c77", vectors: make([][]float32, 8)}
	kept := &pagesPerson{subject: "pages-ivf-kept-2e91d3", vectors: make([][]float32, 200)}
	rng := rand.New(rand.NewPCG(27, 64))
	id := 0
	for _, p := range []*pagesPerson{gone, kept} {
		for i := range p.vectors {
			v := make([]float32, 64)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			p.vectors[i], id = v, id+1
			_, err = direct.Exec(ctx, `INSERT INTO pages_ivf VALUES ($1, jsonb_build_object('user', $2::text), $3::text::vector)`, id, p.subject, pagesVectorText(v))
			require.NoError(t, err)
		}
	}
	_, err = direct.Exec(ctx, `CREATE INDEX ON pages_ivf USING ivfflat (embedding vector_cosine_ops) WITH (lists = 4);
		CREATE INDEX ON pages_ivf USING gin ((meta->'user'))`)
	require.NoError(t, err)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rule := pgstore.Table{Schema: "public", Name: "pages_ivf", ID: "id", Subjects: []pgstore.Subject{{Column: "meta", Path: []string{"user"}}}}
	deleted, got := forgetWithScan(t, store, rule, false, gone.subject)
	require.Equal(t, 8, deleted)
	requireSameCounts(t, got, scanEveryPage(t, direct, "pages_ivf", diskRuns(gone.vectors), gone.subject))
	byKind := map[string]connector.RelationPages{}
	for _, r := range got.Relations {
		byKind[r.Kind] = r
	}
	require.Positive(t, byKind["ivfflat"].HoldingVector, "IVFFlat keeps the deleted vectors until a vacuum")
	require.Positive(t, byKind["gin"].HoldingSubject, "a jsonb_ops GIN keeps the subject's string as a key")
}
