//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// batchIndexes are an HNSW (cosine) index named <table>_hnsw, which
// requireAnswersThroughIndex looks for, and a btree on the subject.
const batchIndexes = `CREATE INDEX %[1]s_hnsw ON %[1]s USING hnsw (embedding vector_cosine_ops); CREATE INDEX ON %[1]s (owner)`

// batchLayer is a layer on table whose steps wait for a batch every hour,
// re-scanning residue every 10 minutes.
func batchLayer(t *testing.T, store *pgstore.Store, table string, steps pgstore.PhysicalSteps) *pgstore.Layer {
	layer, err := pgstore.NewLayer(ctxT(t), store, pagesRule(table), false)
	require.NoError(t, err)
	layer.ReportPhysical(pgstore.DefaultPhysicalScan)
	layer.RemovePhysical(steps)
	layer.RescanPhysical(10 * time.Minute)
	layer.BatchPhysical(time.Hour)
	return layer
}

// vacuumCount is how many times table was vacuumed by hand (not by
// autovacuum), as the server counts it.
func vacuumCount(t *testing.T, direct *pgx.Conn, table string) int64 {
	var n int64
	require.NoError(t, direct.QueryRow(ctxT(t), `SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = $1::regclass`, table).Scan(&n))
	return n
}

// requireBatchReport checks that the latest physical addendum of request
// id is the batch's, with the counts the test's own scan found, and that
// its forget.physical report verifies.
func requireBatchReport(t *testing.T, rig enginetest.Rig, id string, own map[string]pagesFound, subject string) *engine.PhysicalAddendum {
	t.Helper()
	st, err := rig.Engine.Status(ctxT(t), id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest, "the batch ran for this request")
	require.Equal(t, ledger.AddendumBatch, latest.Kind)
	requireSameCounts(t, latest.Physical, own)
	require.Contains(t, latest.Note, "the table's physical steps ran once for the 2 forgets deferred to it")
	report, err := certificate.VerifyReport(latest.Report, rig.Keys)
	require.NoError(t, err)
	require.Equal(t, certificate.EventPhysical, report.Kind)
	require.Equal(t, id, report.RunID)
	require.Equal(t, totalHolding(own), report.Layers[0].Residual)
	require.Equal(t, latest.Physical.Scanned(), report.Layers[0].Found)
	require.NotContains(t, string(latest.Report), subject)
	return latest
}

// TestPhysicalBatch_TwoForgetsOneVacuum: with physical: vacuum and a
// one-hour physical_window, two forgets of one table ten minutes apart
// are certified at once, each with the scan taken right after its delete
// (its counts equal the test's own scan then) and the batch both wait
// for; no VACUUM runs until the window's end, when exactly one runs for
// both (the server's vacuum_count), and each request gets a batch
// addendum whose counts equal the test's own scan after it, with a
// forget.physical report that verifies. The other person's rows still
// answer through the HNSW index.
func TestPhysicalBatch_TwoForgetsOneVacuum(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	first := &pagesPerson{subject: "batch-vacuum-first-2a61", vectors: make([][]float32, 20)}
	second := &pagesPerson{subject: "batch-vacuum-second-9c04", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "batch-vacuum-kept-5e3b", vectors: make([][]float32, 200)}
	pagesTable(t, direct, "batch_vacuum", 64, batchIndexes, first, second, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, 30*24*time.Hour, batchLayer(t, store, "batch_vacuum", pgstore.PhysicalSteps{Vacuum: true}))
	vacuums := vacuumCount(t, direct, "batch_vacuum")
	due := rig.Now().Add(time.Hour).UTC().Format(time.RFC3339)

	var ids []string
	for _, p := range []*pagesPerson{first, second} {
		id := rig.Forget(t, p.subject)
		own := scanEveryPage(t, direct, "batch_vacuum", diskRuns(p.vectors), p.subject)
		st, err := rig.Engine.Status(ctx, id)
		require.NoError(t, err)
		require.Equal(t, ledger.ForgetCompleted, st.Status, "certified at once")
		certified := st.Layers[0].Physical
		requireSameCounts(t, certified, own)
		require.Positive(t, certified.Holding(), "right after a DELETE the bytes are on the pages")
		require.Contains(t, certified.Method, "physical: vacuum; steps deferred to the table's batch (physical_window 1h0m0s)")
		require.Contains(t, certified.Method, "this forget's batch is due at "+due)
		cert, err := rig.Engine.Certificate(ctx, id)
		require.NoError(t, err)
		v := certificate.Verify(cert, rig.Keys, rig.Now())
		require.Equal(t, certificate.VerdictValid, v.Verdict, v.Reason)
		require.Equal(t, ledger.AddendumCertified, st.PhysicalAddenda[0].Kind)
		ids = append(ids, id)
		rig.Advance(10 * time.Minute)
	}
	require.Equal(t, vacuums, vacuumCount(t, direct, "batch_vacuum"), "no VACUUM inside the forgets")

	rig.Advance(39 * time.Minute)
	rig.Engine.RescanDue(ctx)
	require.Equal(t, vacuums, vacuumCount(t, direct, "batch_vacuum"), "not before the window's end")
	rig.Advance(time.Minute)
	rig.Engine.RescanDue(ctx)
	require.Equal(t, vacuums+1, vacuumCount(t, direct, "batch_vacuum"), "one VACUUM for both forgets")

	for i, p := range []*pagesPerson{first, second} {
		own := scanEveryPage(t, direct, "batch_vacuum", diskRuns(p.vectors), p.subject)
		latest := requireBatchReport(t, rig, ids[i], own, p.subject)
		require.Equal(t, 1, strings.Count(latest.Physical.Method, "VACUUM (INDEX_CLEANUP ON)"), latest.Physical.Method)
		require.Contains(t, latest.Physical.Method, "physical: vacuum (one batch: the steps ran once for 2 forgets of the table")
	}
	requireAnswersThroughIndex(t, direct, "batch_vacuum", kept)
}

// TestPhysicalBatch_ScrubRewritesOnceForBoth: with physical: scrub and a
// window, the batch vacuums once, finds what still holds either
// forget's bytes, rewrites the table once (VACUUM FULL), and each
// request's batch scan finds no page holding its bytes, as the test's
// own scan of every page does.
func TestPhysicalBatch_ScrubRewritesOnceForBoth(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	first := &pagesPerson{subject: "batch-scrub-first-71d8", vectors: make([][]float32, 20)}
	second := &pagesPerson{subject: "batch-scrub-second-0be5", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "batch-scrub-kept-c44f", vectors: make([][]float32, 200)}
	pagesTable(t, direct, "batch_scrub", 64, batchIndexes, first, second, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, 30*24*time.Hour, batchLayer(t, store, "batch_scrub",
		pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1024}))

	ids := []string{rig.Forget(t, first.subject), rig.Forget(t, second.subject)}
	rig.Advance(time.Hour)
	rig.Engine.RescanDue(ctx)

	for i, p := range []*pagesPerson{first, second} {
		own := scanEveryPage(t, direct, "batch_scrub", diskRuns(p.vectors), p.subject)
		require.Zero(t, totalHolding(own), "the batch left none of the bytes")
		latest := requireBatchReport(t, rig, ids[i], own, p.subject)
		require.Nil(t, latest.NextAt, "clean: no later re-scan")
		require.Equal(t, 1, strings.Count(latest.Physical.Method, "VACUUM FULL"), latest.Physical.Method)
		require.Contains(t, latest.Physical.Method, "first scans found the bytes of 2 of the 2 forgets")
	}
	requireAnswersThroughIndex(t, direct, "batch_scrub", kept)
}

// TestPhysicalBatch_RestartLosesTheBatch: a process that starts on the
// ledger before the batch ran holds neither the batch nor the bytes;
// once the batch is a whole window overdue it states, in status and in
// the log, that they were held in memory only and the proxy restarted.
func TestPhysicalBatch_RestartLosesTheBatch(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "batch-restart-gone-e193", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "batch-restart-kept-48aa", vectors: make([][]float32, 100)}
	pagesTable(t, direct, "batch_restart", 64, batchIndexes, gone, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	steps := pgstore.PhysicalSteps{Vacuum: true}
	rig := enginetest.New(t, 30*24*time.Hour, batchLayer(t, store, "batch_restart", steps))
	id := rig.Forget(t, gone.subject)

	restarted, err := engine.New(engine.Config{Ledger: rig.Ledger, Hasher: rig.Hasher, Certifier: rig.Certifier, Now: rig.Now,
		Layers: []connector.Layer{batchLayer(t, store, "batch_restart", steps)}})
	require.NoError(t, err)
	defer restarted.Close()
	rig.Advance(2 * time.Hour)
	restarted.RescanDue(ctx)
	st, err := restarted.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	require.Equal(t, ledger.AddendumLost, latest.Kind)
	require.Contains(t, latest.Physical.Reason, "held in memory only and the proxy restarted")
	report, err := certificate.VerifyReport(latest.Report, rig.Keys)
	require.NoError(t, err)
	require.Contains(t, report.Layers[0].Method, "the proxy restarted")
}

// TestPhysicalBatch_ScanNotPossibleRunsTheStepAtOnce: a store role that
// owns the table but cannot read pages has no scan to defer: with a
// window its VACUUM runs inside the forget, as without one, and nothing
// waits for a batch.
func TestPhysicalBatch_ScanNotPossibleRunsTheStepAtOnce(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "batch-nogrant-gone-6f20", vectors: make([][]float32, 3)}
	kept := &pagesPerson{subject: "batch-nogrant-kept-19ad", vectors: make([][]float32, 10)}
	pagesTable(t, direct, "batch_nogrant", 8, batchIndexes, gone, kept)
	_, err := direct.Exec(ctx, `DROP ROLE IF EXISTS batch_nogrant_role; CREATE ROLE batch_nogrant_role LOGIN PASSWORD 'batch-pw';
		ALTER TABLE batch_nogrant OWNER TO batch_nogrant_role`)
	require.NoError(t, err)
	t.Cleanup(func() {
		direct.Exec(context.Background(), `DROP TABLE IF EXISTS batch_nogrant; DROP ROLE IF EXISTS batch_nogrant_role`)
	})
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable user=batch_nogrant_role password=batch-pw"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, 30*24*time.Hour, batchLayer(t, store, "batch_nogrant", pgstore.PhysicalSteps{Vacuum: true}))
	vacuums := vacuumCount(t, direct, "batch_nogrant")

	id := rig.Forget(t, gone.subject)
	require.Equal(t, vacuums+1, vacuumCount(t, direct, "batch_nogrant"), "the VACUUM ran inside the forget")
	st, err := rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	ph := st.Layers[0].Physical
	require.Equal(t, connector.PhysicalNotPossible, ph.Status)
	require.Contains(t, ph.Reason, "GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint)")
	require.True(t, strings.HasPrefix(ph.Method, `physical: vacuum; steps: VACUUM (INDEX_CLEANUP ON) "public"."batch_nogrant" (`), ph.Method)
	require.NotContains(t, ph.Method, "deferred")
	require.Empty(t, st.PhysicalAddenda, "nothing waits for a batch")
}
