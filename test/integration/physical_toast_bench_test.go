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

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// BenchmarkPhysicalToast_TargetedAgainstWhole times one person's forget
// (every 200th row: 100 rows spread over the table) with its page scan,
// in a table of TOASTT_ROWS (default 20,000) rows of 1536 dimensions, of
// 200 people, in a database of its own, when
// the TOAST table is scanned three ways: targeted (the chunks' pages, no
// sample), sampled only (1,024 random pages, nothing targeted) and whole.
// The heap and its primary key are read whole in all three (FullScanPages
// 4,096). Each op forgets another person.
// Metrics: delete_ms (the delete, with what it reads first), scan_ms,
// toast_scanned and toast_holding.
//
//	go test -tags integration -run '^$' -bench BenchmarkPhysicalToast -benchtime 3x ./test/integration/
func BenchmarkPhysicalToast_TargetedAgainstWhole(b *testing.B) {
	rows := 20000
	if s := os.Getenv("TOASTT_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		rows = n
	}
	db := loadTestDB(b)
	admin := connect(b, db.URL(db.Addr(), ""))
	ctx := context.Background()
	_, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS toastt_bench WITH (FORCE)`)
	require.NoError(b, err)
	_, err = admin.Exec(ctx, `CREATE DATABASE toastt_bench`)
	require.NoError(b, err)
	b.Cleanup(func() { admin.Exec(context.Background(), `DROP DATABASE IF EXISTS toastt_bench WITH (FORCE)`) })
	db.DB = "toastt_bench"
	direct := connect(b, db.URL(db.Addr(), ""))
	began := time.Now()
	_, err = direct.Exec(ctx, fmt.Sprintf(`CREATE EXTENSION vector; CREATE EXTENSION pageinspect;
		CREATE TABLE toastt_bench_docs (id bigint PRIMARY KEY, owner text, embedding vector(1536));
		INSERT INTO toastt_bench_docs SELECT i, 'toastt-bench-' || (i %% 200),
			array(SELECT random() - 0.5 + i * 0 FROM generate_series(1, 1536))::real[]::vector(1536)
		FROM generate_series(1, %d) AS i`, rows))
	require.NoError(b, err)
	b.Logf("wrote %d rows in %s", rows, time.Since(began).Round(time.Second))
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(b, err)
	defer store.Close()

	person := 0 // each op forgets another person, whose rows are spread over the table
	for _, c := range []struct {
		name string
		scan pgstore.PhysicalScan
	}{
		{"targeted", pgstore.PhysicalScan{FullScanPages: 4096, SamplePages: 0, TargetedPages: 8192}},
		{"sampled", pgstore.PhysicalScan{FullScanPages: 4096, SamplePages: 1024}},
		{"whole", pgstore.PhysicalScan{FullScanPages: math.MaxInt64}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var deleteMS, scanMS, scanned, holding, pages float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				subject := fmt.Sprintf("toastt-bench-%d", person)
				person++
				layer, err := pgstore.NewLayer(ctx, store, pagesRule("toastt_bench_docs"), false)
				require.NoError(b, err)
				layer.ReportPhysical(c.scan)
				b.StartTimer()
				t0 := time.Now()
				deleted, err := layer.Delete(ctx, subject, nil, nil)
				require.NoError(b, err)
				require.Len(b, deleted, rows/200)
				t1 := time.Now()
				got := layer.Physical(ctx, subject)
				t2 := time.Now()
				require.Equal(b, "scanned", got.Status, got.Reason)
				deleteMS += float64(t1.Sub(t0).Milliseconds())
				scanMS += float64(t2.Sub(t1).Milliseconds())
				for _, r := range got.Relations {
					if r.Kind == "toast" {
						scanned, holding, pages = scanned+float64(r.Scanned), holding+float64(r.Holding), float64(r.Pages)
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(deleteMS/n, "delete_ms")
			b.ReportMetric(scanMS/n, "scan_ms")
			b.ReportMetric(scanned/n, "toast_scanned")
			b.ReportMetric(holding/n, "toast_holding")
			b.ReportMetric(pages, "toast_pages")
		})
	}
}
