//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// BenchmarkPhysical_Scan measures the page scan of forget's physical:
// report on a table of 20,000 rows of 768 dimensions (TOASTed) with an
// HNSW (cosine) index and a btree on the subject, read whole (every
// relation is under the full-scan threshold): each iteration writes 30
// rows for one person, forgets them, and times the scan alone. It reports
// the pages read per second.
//
//	go test -tags integration -run '^$' -bench BenchmarkPhysical_Scan -benchtime 5x ./test/integration/
func BenchmarkPhysical_Scan(b *testing.B) {
	db := loadTestDB(b)
	direct := connect(b, db.URL(db.Addr(), ""))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // building the index takes a while
	defer cancel()
	const table = "pages_bench"
	_, err := direct.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect; DROP TABLE IF EXISTS pages_bench;
		CREATE TABLE pages_bench (id bigint PRIMARY KEY, owner text, embedding vector(768));
		INSERT INTO pages_bench SELECT i, 'pages-bench-' || (i % 1000),
			array(SELECT random() - 0.5 + i * 0 FROM generate_series(1, 768))::real[]::vector(768)
		FROM generate_series(1, 20000) AS i;
		CREATE INDEX ON pages_bench USING hnsw (embedding vector_cosine_ops); CREATE INDEX ON pages_bench (owner)`)
	require.NoError(b, err)
	b.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS pages_bench`) })
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(b, err)
	defer store.Close()
	layer, err := pgstore.NewLayer(ctx, store, pagesRule(table), false)
	require.NoError(b, err)
	layer.ReportPhysical(pgstore.DefaultPhysicalScan)

	var pages int64
	var took time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		subject := fmt.Sprintf("pages-bench-person-%d", i)
		_, err := direct.Exec(ctx, `INSERT INTO pages_bench SELECT 100000 + $2::int * 100 + k, $1,
			array(SELECT random() - 0.5 + k * 0 FROM generate_series(1, 768))::real[]::vector(768) FROM generate_series(1, 30) AS k`, subject, i)
		require.NoError(b, err)
		_, err = layer.Delete(ctx, subject, nil, nil)
		require.NoError(b, err)
		b.StartTimer()
		began := time.Now()
		got := layer.Physical(ctx, subject)
		took += time.Since(began)
		require.Equal(b, "scanned", got.Status, got.Reason)
		pages += got.Scanned()
	}
	b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
	b.ReportMetric(float64(pages)/took.Seconds(), "pages/s")
}
