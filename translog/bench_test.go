package translog_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
	merkle "golang.org/x/mod/sumdb/tlog"
)

var benchEntries = flag.Int64("translog.entries", 1_000_000, "records already in the log that BenchmarkAppendAndProve appends to")

// benchRecord is about the size of an erasure event's record.
func benchRecord(i int64) []byte {
	return fmt.Appendf(nil, `{"event":"erasure","request":"%016x","store":"postgres","rows":12,"sha256":"%064x"}`, i, i)
}

// BenchmarkAppendAndProve measures what the engine does per erasure: append
// the event, then prove its inclusion in the tree that now holds it, on a
// log already holding -translog.entries records. It reports the 99th
// percentile latency; the target is under 5 ms.
//
//	go test -run '^$' -bench AppendAndProve -benchtime 10000x ./translog/
func BenchmarkAppendAndProve(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		s := &translog.MemoryStorage{}
		l := newLog(b, s)
		for i := range *benchEntries {
			_, err := l.Append(context.Background(), benchRecord(i))
			require.NoError(b, err)
		}
		benchAppendAndProve(b, l)
	})
	b.Run("sqlite", func(b *testing.B) {
		l, err := ledger.OpenSQLite(sqliteBenchCopy(b, *benchEntries), ledger.Options{})
		require.NoError(b, err)
		defer l.Close()
		benchAppendAndProve(b, newLog(b, l.TransparencyLog()))
	})
}

func benchAppendAndProve(b *testing.B, l *translog.Log) {
	ctx := context.Background()
	size, err := l.Size(ctx)
	require.NoError(b, err)
	require.Equal(b, *benchEntries, size)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		n, err := l.Append(ctx, benchRecord(size))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.InclusionProof(ctx, n, n+1); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		size++
	}
	slices.Sort(took)
	percentile := func(p float64) float64 {
		return float64(took[int(float64(len(took)-1)*p)]) / float64(time.Millisecond)
	}
	b.ReportMetric(percentile(0.50), "p50-ms")
	b.ReportMetric(percentile(0.99), "p99-ms")
}

// sqliteBenchCopy returns a private copy of a ledger file whose log holds
// entries records. Appending a million records one transaction at a time
// takes hours, so the file is built once with bulk inserts in one
// transaction and cached as /tmp/lethe-tlog-bench-<entries>.db; each run
// gets a copy, since it appends to it.
func sqliteBenchCopy(b *testing.B, entries int64) string {
	cache := filepath.Join(os.TempDir(), fmt.Sprintf("lethe-tlog-bench-%d.db", entries))
	if _, err := os.Stat(cache); errors.Is(err, fs.ErrNotExist) {
		buildSQLiteBenchFile(b, cache, entries)
	}
	dst := filepath.Join(b.TempDir(), "ledger.db")
	in, err := os.Open(cache)
	require.NoError(b, err)
	defer in.Close()
	out, err := os.Create(dst)
	require.NoError(b, err)
	_, err = io.Copy(out, in)
	require.NoError(b, err)
	require.NoError(b, out.Close())
	return dst
}

// buildSQLiteBenchFile writes the ledger's log tables directly, as the
// ledger would after entries appends of benchRecord(0…entries-1).
func buildSQLiteBenchFile(b *testing.B, path string, entries int64) {
	b.Logf("building %s (cached for later runs)", path)
	tmp := fmt.Sprintf("%s.building-%d", path, os.Getpid())
	os.Remove(tmp)
	l, err := ledger.OpenSQLite(tmp, ledger.Options{}) // the ledger's schema
	require.NoError(b, err)
	require.NoError(b, l.Close())

	db, err := sql.Open("sqlite3", "file:"+tmp+"?_journal_mode=WAL&_synchronous=OFF")
	require.NoError(b, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(b, err)
	defer tx.Rollback()
	insRecord, err := tx.Prepare(`INSERT INTO tlog_records (idx, data) VALUES (?, ?)`)
	require.NoError(b, err)
	insHash, err := tx.Prepare(`INSERT INTO tlog_hashes (idx, hash) VALUES (?, ?)`)
	require.NoError(b, err)

	hashes := make([]translog.Hash, 0, merkle.StoredHashCount(entries))
	reader := merkle.HashReaderFunc(func(indexes []int64) ([]translog.Hash, error) {
		out := make([]translog.Hash, len(indexes))
		for i, x := range indexes {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for n := range entries {
		rec := benchRecord(n)
		hs, err := merkle.StoredHashes(n, rec, reader)
		require.NoError(b, err)
		_, err = insRecord.Exec(n, rec)
		require.NoError(b, err)
		for _, h := range hs {
			_, err = insHash.Exec(int64(len(hashes)), h[:])
			require.NoError(b, err)
			hashes = append(hashes, h)
		}
	}
	require.NoError(b, tx.Commit())
	require.NoError(b, db.Close()) // the last connection checkpoints the WAL into the file
	require.NoError(b, os.Rename(tmp, path))
}
