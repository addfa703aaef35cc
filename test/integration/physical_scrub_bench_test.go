//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
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
// LETHE_BENCH_MAINTENANCE_WORK_MEM (default 1GB) is the build's
// maintenance_work_mem: an HNSW graph larger than it is built on disk, far
// slower (1,000,000 rows of 1536 dimensions need about 10GB).
// LETHE_BENCH_KEEP=1 reuses a scrub_bench table that has the wanted rows,
// dimensions and indexes (see benchTableReusable) instead of building it,
// and leaves the table in place at the end. A kept table is reusable
// because the layer deletes each iteration's 100 rows again; what it
// accumulates are their dead tuples and deleted HNSW elements until a
// vacuum (the report step leaves them; the vacuum and scrub steps remove
// them), so a reused table is vacuumed (VACUUM ANALYZE) before the steps,
// as a new one is after its build.
//
//	go test -tags integration -run '^$' -bench BenchmarkPhysical_Steps -benchtime 1x ./test/integration/
//	LETHE_BENCH_ROWS=100000 LETHE_BENCH_DIMS=1536 go test … -bench 'BenchmarkPhysical_Steps/(report|vacuum|scrub-reindex)$' -timeout 3h …
//	LETHE_BENCH_ROWS=1000000 LETHE_BENCH_DIMS=1536 LETHE_BENCH_MAINTENANCE_WORK_MEM=10GB LETHE_BENCH_KEEP=1 go test … -timeout 3h …
func BenchmarkPhysical_Steps(b *testing.B) {
	db := loadTestDB(b)
	direct := connect(b, db.URL(db.Addr(), ""))
	rows, dims := benchEnvInt(b, "LETHE_BENCH_ROWS", 20000), benchEnvInt(b, "LETHE_BENCH_DIMS", 768)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour) // building the indexes takes a while
	defer cancel()
	const table = "scrub_bench"
	keep := os.Getenv("LETHE_BENCH_KEEP") == "1"
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`)
	require.NoError(b, err)
	notReusable := "LETHE_BENCH_KEEP is not 1"
	if keep {
		notReusable = benchTableReusable(b, ctx, direct, table, rows, dims)
	}
	if notReusable == "" {
		b.Logf("reusing %s: %d rows of %d dimensions and its HNSW, btree and GIN indexes are there", table, rows, dims)
		start := time.Now()
		_, err = direct.Exec(ctx, "VACUUM ANALYZE "+table)
		require.NoError(b, err)
		b.Logf("%s vacuumed in %s", table, time.Since(start).Round(time.Second))
	} else {
		b.Logf("building %s: %s", table, notReusable)
		buildBenchTable(b, ctx, direct, table, rows, dims, benchEnvString("LETHE_BENCH_MAINTENANCE_WORK_MEM", "1GB"))
	}
	if keep {
		b.Logf("keeping %s at the end (LETHE_BENCH_KEEP=1)", table)
	} else {
		b.Cleanup(func() { direct.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	}
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

// buildBenchTable (re)creates table with rows rows of dims random
// dimensions, owned by 1,000 subjects, its HNSW (cosine), btree (owner) and
// GIN (meta->'user') indexes built with maintenanceWorkMem (a value of the
// maintenance_work_mem setting, for this session only), and vacuums it.
func buildBenchTable(b testing.TB, ctx context.Context, direct *pgx.Conn, table string, rows, dims int, maintenanceWorkMem string) {
	start := time.Now()
	_, err := direct.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[3]s;
		CREATE TABLE %[3]s (id bigint PRIMARY KEY, owner text, meta jsonb, embedding vector(%[1]d));
		INSERT INTO %[3]s SELECT i, 'scrub-bench-' || (i %% 1000), jsonb_build_object('user', 'scrub-bench-' || (i %% 1000)),
			array(SELECT random() - 0.5 + i * 0 FROM generate_series(1, %[1]d))::real[]::vector(%[1]d)
		FROM generate_series(1, %[2]d) AS i`, dims, rows, table))
	require.NoError(b, err)
	b.Logf("%d rows of %d dimensions written in %s", rows, dims, time.Since(start).Round(time.Second))
	_, err = direct.Exec(ctx, `SELECT set_config('maintenance_work_mem', $1, false)`, maintenanceWorkMem)
	require.NoError(b, err, "LETHE_BENCH_MAINTENANCE_WORK_MEM must be a maintenance_work_mem value such as 1GB or 10GB")
	for _, index := range []string{
		fmt.Sprintf(`CREATE INDEX %[1]s_hnsw ON %[1]s USING hnsw (embedding vector_cosine_ops)`, table),
		fmt.Sprintf(`CREATE INDEX ON %s (owner)`, table),
		fmt.Sprintf(`CREATE INDEX ON %s USING gin ((meta->'user'))`, table),
	} {
		start = time.Now()
		_, err = direct.Exec(ctx, index)
		require.NoError(b, err)
		b.Logf("%s: %s (maintenance_work_mem %s)", index, time.Since(start).Round(time.Second), maintenanceWorkMem)
	}
	_, err = direct.Exec(ctx, `RESET maintenance_work_mem`)
	require.NoError(b, err)
	start = time.Now()
	_, err = direct.Exec(ctx, "VACUUM ANALYZE "+table)
	require.NoError(b, err)
	b.Logf("%s vacuumed in %s", table, time.Since(start).Round(time.Second))
}

// benchTableReusable is "" when table holds exactly ids 1..rows (the
// people the benchmark adds are deleted again), its embedding column is
// vector(dims), and it has valid indexes: HNSW (vector_cosine_ops) on the
// embedding, btree on owner, GIN on (meta->'user'). Otherwise it is what
// differs. The row count is a count over the heap (a vector is TOASTed
// and not read), a few seconds at 1,000,000 rows.
func benchTableReusable(b testing.TB, ctx context.Context, direct *pgx.Conn, table string, rows, dims int) string {
	var exists bool
	require.NoError(b, direct.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, "public."+table).Scan(&exists))
	if !exists {
		return "no such table"
	}
	var column string
	err := direct.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attname = 'embedding' AND NOT attisdropped`, "public."+table).Scan(&column)
	if errors.Is(err, pgx.ErrNoRows) {
		return "no embedding column"
	}
	require.NoError(b, err)
	if want := fmt.Sprintf("vector(%d)", dims); column != want {
		return fmt.Sprintf("embedding is %s, not %s", column, want)
	}
	var all, inRange int64
	require.NoError(b, direct.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE id BETWEEN 1 AND $1) FROM %s`, table), rows).Scan(&all, &inRange))
	if all != int64(rows) || inRange != int64(rows) {
		return fmt.Sprintf("%d rows (%d of ids 1..%d), not %d", all, inRange, rows, rows)
	}
	var defs []string
	require.NoError(b, direct.QueryRow(ctx, `SELECT coalesce(array_agg(pg_get_indexdef(indexrelid)), '{}') FROM pg_index
		WHERE indrelid = $1::regclass AND indisvalid`, "public."+table).Scan(&defs))
	for _, want := range []string{"USING hnsw (embedding vector_cosine_ops)", "USING btree (owner)", "USING gin (((meta -> 'user'::text)))"} {
		found := false
		for _, def := range defs {
			found = found || strings.Contains(def, want)
		}
		if !found {
			return "no valid index " + want
		}
	}
	return ""
}

// TestPhysicalBenchTable_ReusesOnlyAMatchingTable pins what
// LETHE_BENCH_KEEP=1 reuses: a table with exactly the wanted rows (one
// person's rows added and deleted again do not count), the wanted
// dimensions and the three indexes; anything else is named and rebuilt.
func TestPhysicalBenchTable_ReusesOnlyAMatchingTable(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	const table = "phys1m_bench_reuse"
	t.Cleanup(func() { direct.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	buildBenchTable(t, ctx, direct, table, 50, 8, "64MB")
	require.Empty(t, benchTableReusable(t, ctx, direct, table, 50, 8))
	require.Contains(t, benchTableReusable(t, ctx, direct, table, 51, 8), "50 rows")
	require.Contains(t, benchTableReusable(t, ctx, direct, table, 50, 9), "embedding is vector(8), not vector(9)")

	_, err := direct.Exec(ctx, "INSERT INTO "+table+" VALUES (1000, 'someone', '{}', array_fill(0.5, ARRAY[8])::real[]::vector)")
	require.NoError(t, err)
	require.Contains(t, benchTableReusable(t, ctx, direct, table, 50, 8), "51 rows (50 of ids 1..50)")
	_, err = direct.Exec(ctx, "DELETE FROM "+table+" WHERE id = 1000")
	require.NoError(t, err)
	require.Empty(t, benchTableReusable(t, ctx, direct, table, 50, 8), "a deleted person's dead tuples leave the table reusable")

	_, err = direct.Exec(ctx, "DROP INDEX "+table+"_expr_idx")
	require.NoError(t, err)
	require.Contains(t, benchTableReusable(t, ctx, direct, table, 50, 8), "no valid index USING gin")
	_, err = direct.Exec(ctx, "DROP TABLE "+table)
	require.NoError(t, err)
	require.Equal(t, "no such table", benchTableReusable(t, ctx, direct, table, 50, 8))
}

// benchEnvString is the environment variable name, or def when it is unset.
func benchEnvString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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
