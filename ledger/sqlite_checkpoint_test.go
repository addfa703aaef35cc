package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSQLite_CheckpointsOffTheWriter: the writer does not checkpoint inside
// its commits (an intent's commit must not copy the WAL back); the
// checkpointer does.
func TestSQLite_CheckpointsOffTheWriter(t *testing.T) {
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	var auto int
	require.NoError(t, l.w.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto))
	require.Zero(t, auto, "the writer's automatic checkpoints are off")

	ctx := context.Background()
	for i := range 50 {
		id, err := l.Intend(ctx, []Entry{entry("public.docs", strconv.Itoa(i), "alice")})
		require.NoError(t, err)
		require.NoError(t, l.Confirm(ctx, id))
	}
	require.Eventually(t, func() bool { return l.cp.copied.Load() > 0 }, 20*checkpointInterval, 10*time.Millisecond,
		"the checkpointer copied the WAL back")
	require.Len(t, bySubject(t, l, "alice"), 50)
}

// TestSQLite_WALStaysBoundedUnderSteadyWrites: with writes never pausing,
// background checkpoints alone never let the WAL start over; the writer's
// own checkpoint after confirmations must, or the file grows without end.
func TestSQLite_WALStaysBoundedUnderSteadyWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	entries := make([]Entry, 100)
	const statements = 300 // ~180 MB of WAL if it never started over
	for i := range statements {
		for j := range entries {
			entries[j] = entry("public.docs", strconv.Itoa(i*100+j), "subject"+strconv.Itoa((i*100+j)%997))
		}
		id, err := l.Intend(ctx, entries)
		require.NoError(t, err)
		require.NoError(t, l.Confirm(ctx, id))
	}
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	t.Logf("WAL %d KiB after %d statements", fi.Size()>>10, statements)
	require.Less(t, fi.Size(), int64(8*restartFrames*4096), "the WAL started over")
}
