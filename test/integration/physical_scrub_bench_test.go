//go:build integration

package integration

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// BenchmarkPhysical_Steps measures each physical setting's step on a table
// of 20,000 rows of 768 dimensions (TOASTed; LETHE_BENCH_ROWS and
// LETHE_BENCH_DIMS set others; LETHE_BENCH_FULL_SCAN=1 reads every page
// of every relation instead of the default sample) with an HNSW (cosine) index, a
// btree on the subject and a GIN on (meta->'user'): each iteration writes
// 100 rows for one person, deletes them, and times the layer's physical
// step (its VACUUM, REINDEX or VACUUM FULL, and its scans). It reports the
// pages still holding the bytes after the step, the pages scanned, and the
// WAL the server wrote meanwhile (what the step wrote, as PostgreSQL 15 has
// no pg_stat_io; other sessions' writes count too); the log has each
// step's method, with its statements and their times.
//
//	go test -tags integration -run '^$' -bench BenchmarkPhysical_Steps -benchtime 1x ./test/integration/
//	LETHE_BENCH_ROWS=100000 LETHE_BENCH_DIMS=1536 go test … -bench 'BenchmarkPhysical_Steps/(report|vacuum|scrub-reindex)$' -timeout 3h …
func BenchmarkPhysical_Steps(b *testing.B) {
	db := loadTestDB(b)
	direct := connect(b, db.URL(db.Addr(), ""))
	rows, dims := benchEnvInt(b, "LETHE_BENCH_ROWS", 20000), benchEnvInt(b, "LETHE_BENCH_DIMS", 768)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour) // building the indexes takes a while
	defer cancel()
	const table = "scrub_bench"
	start := time.Now()
	_, err := direct.Exec(ctx, fmt.Sprintf(`CREATE EXTENSION IF NOT EXISTS pageinspect; DROP TABLE IF EXISTS scrub_bench;
		CREATE TABLE scrub_bench (id bigint PRIMARY KEY, owner text, meta jsonb, embedding vector(%[1]d));
		INSERT INTO scrub_bench SELECT i, 'scrub-bench-' || (i %% 1000), jsonb_build_object('user', 'scrub-bench-' || (i %% 1000)),
			array(SELECT random() - 0.5 + i * 0 FROM generate_series(1, %[1]d))::real[]::vector(%[1]d)
		FROM generate_series(1, %[2]d) AS i`, dims, rows))
	require.NoError(b, err)
	b.Logf("%d rows of %d dimensions written in %s", rows, dims, time.Since(start).Round(time.Second))
	start = time.Now()
	_, err = direct.Exec(ctx, `SET maintenance_work_mem = '1GB';
		CREATE INDEX scrub_bench_hnsw ON scrub_bench USING hnsw (embedding vector_cosine_ops);
		CREATE INDEX ON scrub_bench (owner); CREATE INDEX ON scrub_bench USING gin ((meta->'user')); RESET maintenance_work_mem`)
	require.NoError(b, err)
	b.Logf("indexes built in %s", time.Since(start).Round(time.Second))
	_, err = direct.Exec(ctx, `VACUUM ANALYZE scrub_bench`)
	require.NoError(b, err)
	b.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS scrub_bench`) })
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(b, err)
	defer store.Close()

	person := 0
	for _, tc := range []struct {
		name  string
		steps pgstore.PhysicalSteps
	}{
		{"report", pgstore.PhysicalSteps{}},
		{"vacuum", pgstore.PhysicalSteps{Vacuum: true}},
		{"scrub-reindex", pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 0}},
		{"scrub-rewrite", pgstore.PhysicalSteps{Vacuum: true, Scrub: true, RewriteMaxPages: 1 << 40}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			layer, err := pgstore.NewLayer(ctx, store, pagesRule(table), false)
			require.NoError(b, err)
			scan := pgstore.DefaultPhysicalScan
			if os.Getenv("LETHE_BENCH_FULL_SCAN") != "" {
				scan.FullScanPages = math.MaxInt64 // every page of every relation, however large
			}
			layer.ReportPhysical(scan)
			layer.RemovePhysical(tc.steps)
			var holding, scanned, wal int64
			for b.Loop() {
				b.StopTimer()
				person++
				subject := fmt.Sprintf("scrub-bench-person-%d", person)
				_, err := direct.Exec(ctx, `INSERT INTO scrub_bench SELECT $4::bigint + $2::int * 1000 + k, $1, jsonb_build_object('user', $1::text),
					array(SELECT random() - 0.5 + k * 0 FROM generate_series(1, $3::int))::real[]::vector FROM generate_series(1, 100) AS k`, subject, person, dims, rows)
				require.NoError(b, err)
				_, err = layer.Delete(ctx, subject, nil, nil)
				require.NoError(b, err)
				before := walLSN(b, direct)
				b.StartTimer()
				got := layer.Physical(ctx, subject)
				b.StopTimer()
				require.Equal(b, "scanned", got.Status, got.Reason)
				wal += walSince(b, direct, before)
				holding, scanned = holding+got.Holding(), scanned+got.Scanned()
				b.Logf("%s: %s", tc.name, got.Method)
				for _, r := range got.Relations {
					b.Logf("%-36s %-6s pages %6d holding %4d", r.Relation, r.Kind, r.Pages, r.Holding)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(holding)/float64(b.N), "holding/op")
			b.ReportMetric(float64(scanned)/float64(b.N), "scanned/op")
			b.ReportMetric(float64(wal)/float64(b.N)/(1<<20), "WAL-MiB/op")
		})
	}
}

// walLSN is the server's current WAL insert position.
func walLSN(b *testing.B, direct *pgx.Conn) string {
	var lsn string
	require.NoError(b, direct.QueryRow(context.Background(), `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn))
	return lsn
}

// walSince is the WAL bytes written since lsn, by the whole server.
func walSince(b *testing.B, direct *pgx.Conn, lsn string) int64 {
	var n int64
	require.NoError(b, direct.QueryRow(context.Background(), `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::int8`, lsn).Scan(&n))
	return n
}

// benchEnvInt is the positive integer in the environment variable name,
// or def when it is unset.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, "%s", name)
	require.Positive(b, n, "%s", name)
	return n
}
