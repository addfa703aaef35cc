//go:build integration

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// scrubTable creates table (dropped at the end) with a bigint id, an owner
// text column, a jsonb meta holding the owner too, and a vector(dims)
// column, with an HNSW (cosine) index, a btree on owner and a GIN on
// (meta->'user'), and writes gone's rows first, then kept's, so that the
// forgotten rows are not at the end of the table (where VACUUM would
// truncate their pages away).
func scrubTable(t *testing.T, direct *pgx.Conn, table string, dims int, gone, kept *pagesPerson) {
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`)
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	_, err = direct.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, owner text, meta jsonb, embedding vector(%[2]d));
		CREATE INDEX %[1]s_hnsw ON %[1]s USING hnsw (embedding vector_cosine_ops);
		CREATE INDEX %[1]s_owner ON %[1]s (owner);
		CREATE INDEX %[1]s_gin ON %[1]s USING gin ((meta->'user'))`, table, dims))
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS `+table) })
	rng := rand.New(rand.NewPCG(16, uint64(len(table))))
	id := 0
	for _, p := range []*pagesPerson{gone, kept} {
		for i := range p.vectors {
			v := make([]float32, dims)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			p.vectors[i], id = v, id+1
			_, err = direct.Exec(ctx, `INSERT INTO `+table+` (id, owner, meta, embedding) VALUES ($1, $2, jsonb_build_object('user', $2::text), $3::text::vector)`,
				id, p.subject, pagesVectorText(v))
			require.NoError(t, err)
		}
	}
	awaitNoOlderSnapshot(t, direct)
}

// forgetWithSteps is forgetPhysically with the default scan and steps.
func forgetWithSteps(t *testing.T, store *pgstore.Store, table pgstore.Table, steps pgstore.PhysicalSteps, subject string) (int, *connector.Physical) {
	return forgetPhysically(t, store, table, false, pgstore.DefaultPhysicalScan, &steps, subject)
}

// requireAnswersThroughIndex checks that kept's rows still answer a vector
// query, and that the query is served by the table's HNSW index.
func requireAnswersThroughIndex(t *testing.T, direct *pgx.Conn, table string, kept *pagesPerson) {
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `SET enable_seqscan = off`)
	require.NoError(t, err)
	defer direct.Exec(context.Background(), `RESET enable_seqscan`)
	q := `SELECT id FROM ` + table + ` ORDER BY embedding <=> $1::text::vector LIMIT 5`
	var plan strings.Builder
	rows, err := direct.Query(ctx, `EXPLAIN `+q, pagesVectorText(kept.vectors[0]))
	require.NoError(t, err)
	var line string
	_, err = pgx.ForEachRow(rows, []any{&line}, func() error { plan.WriteString(line + "\n"); return nil })
	require.NoError(t, err)
	require.Contains(t, plan.String(), table+"_hnsw", "the query is served by the HNSW index")
	var owners []string
	rows, err = direct.Query(ctx, `SELECT owner FROM `+table+` WHERE id IN (`+q+`)`, pagesVectorText(kept.vectors[0]))
	require.NoError(t, err)
	owners, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, owners, 5)
	for _, o := range owners {
		require.Equal(t, kept.subject, o)
	}
}

func holdingByKind(p *connector.Physical) map[string]int64 {
	out := map[string]int64{}
	for _, r := range p.Relations {
		out[r.Kind] += r.Holding
	}
	return out
}

// TestPhysical_ScrubLeavesNoBytes forgets one of two people from a table
// with TOASTed vectors (768 dimensions), an HNSW index, a btree and a GIN
// on the subject, with physical: scrub: the test's own reading of every
// page of the heap, TOAST table and every index finds none of the
// forgotten person's vector bytes or subject text, the layer's counts are
// the same, its method names the steps, and the other person's rows still
// answer a vector query through the index.
func TestPhysical_ScrubLeavesNoBytes(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "scrub-gone-4d91e7", vectors: make([][]float32, 30)}
	kept := &pagesPerson{subject: "scrub-kept-b3702c", vectors: make([][]float32, 300)}
	scrubTable(t, direct, "scrub_zero", 768, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithSteps(t, store, pagesRule("scrub_zero"),
		pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1024}, gone.subject)
	require.Equal(t, 30, deleted)
	want := scanEveryPage(t, direct, "scrub_zero", diskRuns(gone.vectors), gone.subject)
	for rel, f := range want {
		require.Zero(t, f.holding, "%s still holds the forgotten person's bytes in %d pages", rel, f.holding)
	}
	requireSameCounts(t, got, want)
	require.Zero(t, got.Holding())
	require.Contains(t, got.Method, "physical: scrub; steps: VACUUM (INDEX_CLEANUP ON) \"public\".\"scrub_zero\" (")
	require.Contains(t, got.Method, "a first scan found the bytes in ")
	require.Contains(t, got.Method, "VACUUM FULL \"public\".\"scrub_zero\" (lock_timeout 2s; it rebuilt every index)")
	require.NotContains(t, got.Method, gone.subject)
	requireAnswersThroughIndex(t, direct, "scrub_zero", kept)
}

// TestPhysical_ScrubOverTheRewriteLimit: with scrub_rewrite_max_pages
// below the table's size, scrub rebuilds the indexes that hold the bytes
// (the GIN keeps the subject's key after VACUUM) but does not rewrite the
// table, and states the TOAST residue: its counts equal the test's own
// reading, which still finds the vectors' TOAST chunks.
func TestPhysical_ScrubOverTheRewriteLimit(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "scrub-limit-gone-61c0", vectors: make([][]float32, 30)}
	kept := &pagesPerson{subject: "scrub-limit-kept-2f8a", vectors: make([][]float32, 300)}
	scrubTable(t, direct, "scrub_limit", 768, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	_, got := forgetWithSteps(t, store, pagesRule("scrub_limit"),
		pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 10}, gone.subject)
	requireSameCounts(t, got, scanEveryPage(t, direct, "scrub_limit", diskRuns(gone.vectors), gone.subject))
	byKind := holdingByKind(got)
	require.Positive(t, byKind["toast"], "VACUUM frees the TOAST chunks without zeroing them, and the table was not rewritten")
	require.Zero(t, byKind["gin"], "REINDEX CONCURRENTLY rebuilt the GIN without the subject's key")
	require.Zero(t, byKind["hnsw"])
	require.Contains(t, got.Method, "REINDEX INDEX CONCURRENTLY scrub_limit_gin (")
	require.Contains(t, got.Method, "VACUUM FULL \"public\".\"scrub_limit\": not run: the table, its TOAST table and indexes have ")
	require.Contains(t, got.Method, "over scrub_rewrite_max_pages 10")
	requireAnswersThroughIndex(t, direct, "scrub_limit", kept)
}

// TestPhysical_VacuumSettingCountsEqualTheScan: physical: vacuum vacuums
// before the scan (with the rule's vacuum: false), and its counts equal
// the test's own reading: no HNSW element or btree key left, the GIN key
// and the TOAST chunks still there.
func TestPhysical_VacuumSettingCountsEqualTheScan(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "scrub-vacuum-gone-a5e3", vectors: make([][]float32, 30)}
	kept := &pagesPerson{subject: "scrub-vacuum-kept-07bd", vectors: make([][]float32, 300)}
	scrubTable(t, direct, "scrub_vacuum", 768, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	_, got := forgetWithSteps(t, store, pagesRule("scrub_vacuum"), pgstore.PhysicalSteps{Vacuum: true}, gone.subject)
	requireSameCounts(t, got, scanEveryPage(t, direct, "scrub_vacuum", diskRuns(gone.vectors), gone.subject))
	byKind := holdingByKind(got)
	require.Zero(t, byKind["hnsw"], "VACUUM (INDEX_CLEANUP ON) zeroes deleted HNSW elements")
	require.Positive(t, byKind["gin"], "GIN vacuum empties posting lists but keeps the key")
	require.Positive(t, byKind["toast"])
	require.True(t, strings.HasPrefix(got.Method, "physical: vacuum; steps: VACUUM (INDEX_CLEANUP ON) \"public\".\"scrub_vacuum\" ("), got.Method)
	require.NotContains(t, got.Method, "REINDEX")
}

// TestPhysical_ScrubWithoutOwnership: a store role that may read, delete
// and read pages (lethe_raw_page) but does not own the table forgets; its
// VACUUM, VACUUM FULL and REINDEX are not possible, and the method says so
// with the grant that makes them so, while the counts state the residue
// the test's own reading finds.
func TestPhysical_ScrubWithoutOwnership(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "scrub-owner-gone-9c14", vectors: make([][]float32, 10)}
	kept := &pagesPerson{subject: "scrub-owner-kept-e2b5", vectors: make([][]float32, 40)}
	scrubTable(t, direct, "scrub_owner", 768, gone, kept)
	_, err := direct.Exec(ctx, pgstore.RawPageFunctionSQL)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `DROP ROLE IF EXISTS scrub_owner_role; CREATE ROLE scrub_owner_role LOGIN PASSWORD 'scrub-pw';
		GRANT SELECT, DELETE ON scrub_owner TO scrub_owner_role;
		GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) TO scrub_owner_role`)
	require.NoError(t, err)
	t.Cleanup(func() {
		direct.Exec(context.Background(), `DROP TABLE IF EXISTS scrub_owner;
			REVOKE EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) FROM scrub_owner_role; DROP ROLE IF EXISTS scrub_owner_role`)
	})

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable user=scrub_owner_role password=scrub-pw"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithSteps(t, store, pagesRule("scrub_owner"),
		pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1024}, gone.subject)
	require.Equal(t, 10, deleted)
	requireSameCounts(t, got, scanEveryPage(t, direct, "scrub_owner", diskRuns(gone.vectors), gone.subject))
	require.Positive(t, got.Holding(), "nothing removed the bytes")
	require.Positive(t, holdingByKind(got)["hnsw"], "no VACUUM ran")
	for _, step := range []string{`VACUUM (INDEX_CLEANUP ON) "public"."scrub_owner": not possible: VACUUM: the store role does not own the table`,
		`VACUUM FULL "public"."scrub_owner": not possible: VACUUM FULL: the store role does not own the table`} {
		require.Contains(t, got.Method, step)
	}
	require.Contains(t, got.Method, `GRANT lethe TO scrub_owner_role (or ALTER TABLE "public"."scrub_owner" OWNER TO scrub_owner_role)`)
	require.NotContains(t, got.Method, gone.subject)
}

// TestPhysical_ScrubZeroRecords: a forget of a subject with no rows has
// nothing to look for and runs no step.
func TestPhysical_ScrubZeroRecords(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	kept := &pagesPerson{subject: "scrub-zero-kept-58f0", vectors: make([][]float32, 3)}
	scrubTable(t, direct, "scrub_none", 8, &pagesPerson{}, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithSteps(t, store, pagesRule("scrub_none"),
		pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1024}, "scrub-nobody-here")
	require.Zero(t, deleted)
	require.Equal(t, connector.PhysicalNothingDeleted, got.Status)
	require.Empty(t, got.Relations)
	require.Empty(t, got.Method, "no step ran")
}

// TestPhysical_ScrubCertificateSaysClean runs a whole forget through the
// engine over a physical: scrub layer: the certificate is v2, its layer's
// physical section names the steps that ran and counts no page holding the
// bytes (as the test's own reading finds), and it verifies valid with the
// physical line "clean in all N pages".
func TestPhysical_ScrubCertificateSaysClean(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "scrub-cert-gone-3a7f", vectors: make([][]float32, 12)}
	kept := &pagesPerson{subject: "scrub-cert-kept-c96d", vectors: make([][]float32, 60)}
	scrubTable(t, direct, "scrub_cert", 768, gone, kept)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	layer, err := pgstore.NewLayer(ctx, store, pagesRule("scrub_cert"), false)
	require.NoError(t, err)
	layer.ReportPhysical(pgstore.DefaultPhysicalScan)
	layer.RemovePhysical(pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1024})
	rig := enginetest.New(t, time.Hour, layer)
	id := rig.Forget(t, gone.subject)
	cert, err := rig.Engine.Certificate(ctx, id)
	require.NoError(t, err)
	res := certificate.Verify(cert, rig.Keys, rig.Now())
	require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
	want := scanEveryPage(t, direct, "scrub_cert", diskRuns(gone.vectors), gone.subject)
	var pages int64
	for _, f := range want {
		require.Zero(t, f.holding)
		pages += f.pages
	}
	require.Equal(t, fmt.Sprintf("postgres public.scrub_cert: clean in all %d pages", pages), res.Physical)
	require.NotNil(t, res.Payload)
	ph := res.Payload.Layers[0].Physical
	require.NotNil(t, ph)
	require.Contains(t, ph.Method, "physical: scrub; steps: VACUUM (INDEX_CLEANUP ON)")
	require.Contains(t, ph.Method, "VACUUM FULL")
	require.NotContains(t, string(cert), gone.subject)
}
