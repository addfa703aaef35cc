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

// vectorIndexRelations are the scan's results for the table's HNSW and
// IVFFlat indexes, by name.
func vectorIndexRelations(t *testing.T, got *connector.Physical) map[string]connector.RelationPages {
	t.Helper()
	require.Equal(t, connector.PhysicalScanned, got.Status, got.Reason)
	out := map[string]connector.RelationPages{}
	for _, r := range got.Relations {
		t.Logf("%-40s %-8s pages %4d scanned %4d holding %4d (vector %4d, subject %4d) %s",
			r.Relation, r.Kind, r.Pages, r.Scanned, r.Holding, r.HoldingVector, r.HoldingSubject, r.Coverage)
		if r.Kind == "hnsw" || r.Kind == "ivfflat" {
			out[r.Relation] = r
		}
	}
	return out
}

// TestPhysicalVectorIndexes_TargetsTheDeletedRowsEntries: with HNSW and
// IVFFlat indexes over the scan's bound (FullScanPages 4) and no sample,
// the scan reads the index pages where the forgotten person's entries
// were, found before the delete by walking each HNSW graph and reading
// the IVFFlat lists nearest her values, and finds as many pages holding
// her vectors as the test's own reading of every page: for an L2, a
// cosine (which stores the values normalised), an inner-product index,
// and a cosine index on the column cast to halfvec (which stores the
// values as halfvec, normalised: the scan recognises those bytes too) HNSW
// index, and an IVFFlat index of 8 lists built over the rows (cosine). A
// scan that only samples (one page, nothing targeted) finds fewer.
func TestPhysicalVectorIndexes_TargetsTheDeletedRowsEntries(t *testing.T) {
	db, direct := toasttDB(t, "hnswt_target")
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "hnswt-gone-71c3", vectors: make([][]float32, 20)}
	sampled := &pagesPerson{subject: "hnswt-sampled-2a90", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "hnswt-kept-d4e8", vectors: make([][]float32, 400)}
	pagesTable(t, direct, "hnswt_docs", 768, `CREATE INDEX hnswt_l2 ON %[1]s USING hnsw (embedding vector_l2_ops);
		CREATE INDEX hnswt_cos ON %[1]s USING hnsw (embedding vector_cosine_ops) WITH (m = 8);
		CREATE INDEX hnswt_ip ON %[1]s USING hnsw (embedding vector_ip_ops);
		CREATE INDEX hnswt_half ON %[1]s USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)`, gone, sampled, kept)
	_, err := direct.Exec(ctx, `CREATE INDEX hnswt_ivf ON hnswt_docs USING ivfflat (embedding vector_cosine_ops) WITH (lists = 8)`)
	require.NoError(t, err)
	goneRuns := diskRuns(gone.vectors)
	halfRuns(t, direct, "hnswt_docs", gone.subject, goneRuns)
	sampledRuns := diskRuns(sampled.vectors)
	halfRuns(t, direct, "hnswt_docs", sampled.subject, sampledRuns)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	scan := pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 0, TargetedPages: 8192}
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("hnswt_docs"), scan, gone.subject)
	require.Equal(t, 20, deleted)
	want := scanEveryPage(t, direct, "hnswt_docs", goneRuns, gone.subject)
	indexes := vectorIndexRelations(t, got)
	require.Len(t, indexes, 5)
	for name, r := range indexes {
		own := want[name]
		require.Greater(t, r.Pages, scan.FullScanPages, "%s is over the bound", name)
		require.Equal(t, "targeted+sample", r.Coverage)
		require.Greater(t, own.vector, int64(1), name)
		require.Equal(t, own.holding, r.Holding, "%s: pages holding the bytes: the targeted read finds every one", name)
		require.Equal(t, r.Holding, r.Scanned, "%s: only the pages that held the elements are read", name)
		require.Contains(t, got.Method, fmt.Sprintf("%s (0 pages sampled): %d pages targeted, where the entries of 20 of the 20 deleted rows were", name, r.Scanned))
	}
	require.NotContains(t, got.Method, "entries not targeted")
	require.NotContains(t, got.Method, gone.subject)

	// The sample alone: one random page of each, nothing targeted.
	scan = pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 1}
	_, got = forgetWithPhysicalScan(t, store, pagesRule("hnswt_docs"), scan, sampled.subject)
	want = scanEveryPage(t, direct, "hnswt_docs", sampledRuns, sampled.subject)
	for name, r := range vectorIndexRelations(t, got) {
		require.Equal(t, int64(1), r.Scanned)
		require.Less(t, r.Holding, want[name].holding, "%s: a sample of one page cannot see all of %d pages", name, want[name].holding)
	}
}

// halfRuns adds to runs the test's own reading of how subject's vectors
// sit on the pages of an index on the column cast to halfvec: the server's
// halfvec of each, as is and L2-normalised (little-endian on the page),
// every run of 8 consecutive elements.
func halfRuns(t *testing.T, direct *pgx.Conn, table, subject string, runs map[string]bool) {
	rows, err := direct.Query(ctxT(t), `SELECT halfvec_send(embedding::halfvec), halfvec_send(l2_normalize(embedding::halfvec))
		FROM `+table+` WHERE owner = $1`, subject)
	require.NoError(t, err)
	var asHalf, unit []byte
	_, err = pgx.ForEachRow(rows, []any{&asHalf, &unit}, func() error {
		for _, sent := range [][]byte{asHalf, unit} {
			disk := make([]byte, len(sent)-4)
			for i := range len(disk) / 2 {
				disk[2*i], disk[2*i+1] = sent[4+2*i+1], sent[4+2*i]
			}
			for i := 0; i+16 <= len(disk); i += 2 {
				runs[string(disk[i:i+16])] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// TestPhysicalVectorIndexes_ThroughTheRawPageFunctionWhileWritten: a store
// role that is no superuser and reads pages through lethe_raw_page finds
// the forgotten person's HNSW and IVFFlat entries the same way, while
// another session inserts into the table (and so into both indexes)
// throughout the forget.
func TestPhysicalVectorIndexes_ThroughTheRawPageFunctionWhileWritten(t *testing.T) {
	db, direct := toasttDB(t, "hnswt_role")
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "hnswt-role-gone-5a0c", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "hnswt-role-kept-e93b", vectors: make([][]float32, 300)}
	pagesTable(t, direct, "hnswt_role_docs", 768, `CREATE INDEX hnswt_role_l2 ON %[1]s USING hnsw (embedding vector_l2_ops)`, gone, kept)
	_, err := direct.Exec(ctx, `CREATE INDEX hnswt_role_ivf ON hnswt_role_docs USING ivfflat (embedding vector_l2_ops) WITH (lists = 4)`)
	require.NoError(t, err)
	login := rawPageRole(t, db, direct, "hnswt_role", "hnswt_role_docs")
	runs := diskRuns(gone.vectors)

	// Another session writes new rows until the forget is done.
	writer := connect(t, db.URL(db.Addr(), ""))
	stop, written, started := make(chan struct{}), make(chan int), make(chan struct{})
	go func() {
		n := 0
		for id := 100000; ; id++ {
			select {
			case <-stop:
				written <- n
				return
			default:
			}
			v := make([]float32, 768)
			for j := range v {
				v[j] = float32((id*31+j*7)%1000)/500 - 1
			}
			if _, err := writer.Exec(context.Background(), `INSERT INTO hnswt_role_docs (id, owner, embedding) VALUES ($1, 'hnswt-role-writer', $2::text::vector)`,
				id, pagesVectorText(v)); err != nil {
				if n == 0 {
					close(started)
				}
				written <- -1
				return
			}
			if n++; n == 1 {
				close(started)
			}
		}
	}()
	<-started // the forget starts once the other session is writing

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable "+login))
	require.NoError(t, err)
	defer store.Close()
	scan := pgstore.PhysicalScan{FullScanPages: 4, SamplePages: 0, TargetedPages: 8192}
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("hnswt_role_docs"), scan, gone.subject)
	close(stop)
	require.Positive(t, <-written, "the other session wrote throughout the forget")
	require.Equal(t, 20, deleted)
	require.Contains(t, got.Method, "lethe_raw_page")
	want := scanEveryPage(t, direct, "hnswt_role_docs", runs, gone.subject)
	indexes := vectorIndexRelations(t, got)
	require.Len(t, indexes, 2)
	for name, r := range indexes {
		require.Positive(t, want[name].vector, name)
		require.Equal(t, want[name].holding, r.Holding, "%s: the targeted read finds every page holding the bytes", name)
		require.Contains(t, got.Method, fmt.Sprintf("%s (0 pages sampled): %d pages targeted, where the entries of 20 of the 20 deleted rows were", name, r.Scanned))
	}
}
