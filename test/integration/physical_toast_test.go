//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// toasttDB creates a database of its own for a test (dropped at the end),
// with pgvector and pageinspect, and returns it and a superuser
// connection to it: the grants these tests make on the schema pg_toast
// stay in it.
func toasttDB(t *testing.T, name string) (testDB, *pgx.Conn) {
	db := loadTestDB(t)
	admin := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, `CREATE DATABASE `+name)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	db.DB = name
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err = direct.Exec(ctx, `CREATE EXTENSION vector; CREATE EXTENSION pageinspect`)
	require.NoError(t, err)
	return db, direct
}

// rawPageRole creates a login role that may SELECT from and DELETE in
// table and reads pages only through lethe_raw_page (created here), in
// the test's own database db (toasttDB), and drops both the database and
// the role at the end (the role holds privileges in the database, so that
// goes first). It returns the connection options that log in as the role.
func rawPageRole(t *testing.T, db testDB, direct *pgx.Conn, role, table string) string {
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, pgstore.RawPageFunctionSQL)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, fmt.Sprintf(`DROP ROLE IF EXISTS %[1]s; CREATE ROLE %[1]s LOGIN PASSWORD '%[1]s-pw';
		GRANT SELECT, DELETE ON %[2]s TO %[1]s;
		GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) TO %[1]s`, role, table))
	require.NoError(t, err)
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), loadTestDB(t).URL(db.Addr(), ""))
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+db.DB+` WITH (FORCE)`)
		admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+role)
	})
	return fmt.Sprintf("user=%[1]s password=%[1]s-pw", role)
}

// forgetWithPhysicalScan is forgetPhysically with scan and no steps.
func forgetWithPhysicalScan(t *testing.T, store *pgstore.Store, table pgstore.Table, scan pgstore.PhysicalScan, subject string) (int, *connector.Physical) {
	return forgetPhysically(t, store, table, false, scan, nil, subject)
}

// toastRelation is the scan's result for the TOAST table, and the test's
// own count for it.
func toastRelation(t *testing.T, got *connector.Physical, want map[string]pagesFound) (connector.RelationPages, pagesFound) {
	t.Helper()
	require.Equal(t, connector.PhysicalScanned, got.Status, got.Reason)
	for _, r := range got.Relations {
		t.Logf("%-40s %-8s pages %4d scanned %4d holding %4d (vector %4d, subject %4d) %s",
			r.Relation, r.Kind, r.Pages, r.Scanned, r.Holding, r.HoldingVector, r.HoldingSubject, r.Coverage)
		if r.Kind == "toast" {
			w, ok := want[r.Relation]
			require.True(t, ok, "the test's own scan has no %s", r.Relation)
			return r, w
		}
	}
	t.Fatal("the scan has no TOAST relation")
	return connector.RelationPages{}, pagesFound{}
}

// TestPhysicalToast_TargetsTheDeletedRowsChunks: with a TOAST table over
// the scan's bound (FullScanPages 4) and no sample, the scan reads the
// TOAST pages where the forgotten person's vectors (768 dimensions, stored
// out of line) had their chunks, and finds as many pages holding them as
// the test's own reading of every page; a scan that only samples (one
// page, nothing targeted) finds fewer of another person's.
func TestPhysicalToast_TargetsTheDeletedRowsChunks(t *testing.T) {
	db, direct := toasttDB(t, "toastt_target")
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "toastt-gone-5e1a", vectors: make([][]float32, 20)}
	sampled := &pagesPerson{subject: "toastt-sampled-c07d", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "toastt-kept-93b2", vectors: make([][]float32, 100)}
	pagesTable(t, direct, "toastt_docs", 768, "", gone, sampled, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	scan := pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 0, TargetedPages: 8192}
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("toastt_docs"), scan, gone.subject)
	require.Equal(t, 20, deleted)
	want := scanEveryPage(t, direct, "toastt_docs", diskRuns(gone.vectors), gone.subject)
	toast, own := toastRelation(t, got, want)
	require.Greater(t, toast.Pages, scan.FullScanPages, "the TOAST table is over the bound")
	require.Equal(t, "targeted+sample", toast.Coverage)
	require.Greater(t, own.vector, int64(1))
	require.Equal(t, own.holding, toast.Holding, "pages holding the bytes: the targeted read finds every one")
	require.Equal(t, own.vector, toast.HoldingVector)
	require.Equal(t, toast.Holding, toast.Scanned, "only the pages that held the chunks are read")
	require.Contains(t, got.Method, fmt.Sprintf("%s (0 pages sampled): %d pages targeted", toast.Relation, toast.Scanned))
	require.NotContains(t, got.Method, gone.subject)

	// The sample alone: one random page, nothing targeted.
	scan = pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 1}
	_, got = forgetWithPhysicalScan(t, store, pagesRule("toastt_docs"), scan, sampled.subject)
	want = scanEveryPage(t, direct, "toastt_docs", diskRuns(sampled.vectors), sampled.subject)
	toast, own = toastRelation(t, got, want)
	require.Equal(t, int64(1), toast.Scanned)
	require.Less(t, toast.Holding, own.holding, "a sample of one page cannot see all of %d pages", own.holding)
}

// TestPhysicalToast_RoleWithoutToastAccess: a store role that reads pages
// through lethe_raw_page but may not query the TOAST table forgets in all
// three cases: when the TOAST table's index is over the scan's bound, its
// scan reads the TOAST table's sample only, saying why and naming the
// grants; when the index is within the bound, the chunks are found by
// reading the index's pages instead and targeted; with USAGE on pg_toast
// and SELECT on the TOAST table granted, the query finds them.
func TestPhysicalToast_RoleWithoutToastAccess(t *testing.T) {
	db, direct := toasttDB(t, "toastt_grant")
	ctx := ctxT(t)
	first := &pagesPerson{subject: "toastt-grant-first-4b9e", vectors: make([][]float32, 10)}
	second := &pagesPerson{subject: "toastt-grant-second-a61f", vectors: make([][]float32, 10)}
	third := &pagesPerson{subject: "toastt-grant-third-e2d5", vectors: make([][]float32, 10)}
	kept := &pagesPerson{subject: "toastt-grant-kept-07c3", vectors: make([][]float32, 50)}
	pagesTable(t, direct, "toastt_granted", 768, "", first, second, third, kept)
	login := rawPageRole(t, db, direct, "toastt_role", "toastt_granted")
	var toastName string
	var heapPages, indexPages int64
	require.NoError(t, direct.QueryRow(ctx, `SELECT c.reltoastrelid::regclass::text, pg_relation_size(c.oid) / 8192,
		pg_relation_size((SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid)) / 8192
		FROM pg_class c WHERE c.oid = 'toastt_granted'::regclass`).Scan(&toastName, &heapPages, &indexPages))
	require.Equal(t, int64(1), heapPages, "the test reads the heap whole with a bound of 1 page")
	require.Equal(t, int64(2), indexPages, "the TOAST index's metapage and one leaf")

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable "+login))
	require.NoError(t, err)
	defer store.Close()
	scan := pgstore.PhysicalScan{FullScanPages: 1, SamplePages: 2, TargetedPages: 8192}
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("toastt_granted"), scan, first.subject)
	require.Equal(t, 10, deleted)
	toast, _ := toastRelation(t, got, scanEveryPage(t, direct, "toastt_granted", diskRuns(first.vectors), first.subject))
	require.Equal(t, "targeted+sample", toast.Coverage)
	require.Equal(t, int64(2), toast.Scanned, "the sample only")
	require.Contains(t, got.Method, "lethe_raw_page")
	require.Contains(t, got.Method, toastName+" (2 pages sampled): 0 pages targeted")
	require.Contains(t, got.Method, "TOAST chunks not targeted: the store role cannot read "+toastName+
		": GRANT USAGE ON SCHEMA pg_toast TO the store role and, unless it owns the table, GRANT SELECT ON "+toastName+" TO it")
	require.Contains(t, got.Method, "its index, of 2 pages, is over the scan's bound to be read instead")

	scan = pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 0, TargetedPages: 8192}
	_, got = forgetWithPhysicalScan(t, store, pagesRule("toastt_granted"), scan, second.subject)
	toast, own := toastRelation(t, got, scanEveryPage(t, direct, "toastt_granted", diskRuns(second.vectors), second.subject))
	require.Positive(t, own.holding)
	require.Equal(t, own.holding, toast.Holding, "the chunks are found through the TOAST index's pages")
	require.Equal(t, toast.Holding, toast.Scanned)
	require.Contains(t, got.Method, "found by reading 2 pages of the TOAST table's index")
	require.NotContains(t, got.Method, "not targeted")

	_, err = direct.Exec(ctx, `GRANT USAGE ON SCHEMA pg_toast TO toastt_role; GRANT SELECT ON `+toastName+` TO toastt_role`)
	require.NoError(t, err)
	_, got = forgetWithPhysicalScan(t, store, pagesRule("toastt_granted"), scan, third.subject)
	toast, own = toastRelation(t, got, scanEveryPage(t, direct, "toastt_granted", diskRuns(third.vectors), third.subject))
	require.Positive(t, own.holding)
	require.Equal(t, own.holding, toast.Holding, "with the grants the query finds the chunks")
	require.NotContains(t, got.Method, "not targeted")
	require.NotContains(t, got.Method, "TOAST table's index")
}

// TestPhysicalToast_TargetingIsCapped: with TargetedPages 1, the rows of
// a forget spread over two heap pages are read for their TOAST pointers in
// one of them only, one TOAST page is targeted, and the method says both.
func TestPhysicalToast_TargetingIsCapped(t *testing.T) {
	db, direct := toasttDB(t, "toastt_capped")
	ctx := ctxT(t)
	const subject = "toastt-capped-2d84"
	early := &pagesPerson{subject: subject, vectors: make([][]float32, 10)}
	kept := &pagesPerson{subject: "toastt-capped-kept-f5e0", vectors: make([][]float32, 200)}
	late := &pagesPerson{subject: subject, vectors: make([][]float32, 10)}
	pagesTable(t, direct, "toastt_cap", 768, "", early, kept, late)
	var heapPages int64
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(DISTINCT (ctid::text::point)[0]) FROM toastt_cap WHERE owner = $1`, subject).Scan(&heapPages))
	require.Equal(t, int64(2), heapPages, "the test needs the person's rows in two heap pages")

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	scan := pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 0, TargetedPages: 1}
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("toastt_cap"), scan, subject)
	require.Equal(t, 20, deleted)
	toast, own := toastRelation(t, got, scanEveryPage(t, direct, "toastt_cap", diskRuns(append(early.vectors, late.vectors...)), subject))
	require.Equal(t, int64(1), toast.Scanned)
	require.Equal(t, int64(1), toast.Holding)
	require.Greater(t, own.holding, int64(1))
	require.Contains(t, got.Method, "capped: the rows in 1 of 2 heap pages were not read for their pointers")
	require.Regexp(t, `capped: [1-9][0-9]* more pages held them`, got.Method)
}
