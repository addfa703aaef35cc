package ledger

import (
	"bytes"
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"log/slog"
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
	require.NoError(t, l.writer.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto))
	require.Zero(t, auto, "the writer's automatic checkpoints are off")

	ctx := context.Background()
	for i := range 50 {
		id, err := l.Intend(ctx, []Entry{entry("public.docs", strconv.Itoa(i), "alice")})
		require.NoError(t, err)
		require.NoError(t, l.Confirm(ctx, id))
	}
	require.Eventually(t, func() bool { return l.checkpoints.copied.Load() > 0 }, 20*checkpointInterval, 10*time.Millisecond,
		"the checkpointer copied the WAL back")
	require.Len(t, bySubject(t, l, "alice"), 50)
}

// TestSQLite_WriterPragmasSurviveReconnection: database/sql opens a new
// writer connection after an error (relaxedSync asks for one when it
// cannot restore FULL), and that connection too neither checkpoints inside
// its commits nor leaves the WAL file at its longest.
func TestSQLite_WriterPragmasSurviveReconnection(t *testing.T) {
	l, err := openSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{}, 0)
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	conn, err := l.writer.Conn(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, conn.Raw(func(any) error { return driver.ErrBadConn }), driver.ErrBadConn)
	conn.Close()
	require.Zero(t, l.writer.Stats().OpenConnections, "the writer's connection was closed, not put back")

	var auto, limit int
	require.NoError(t, l.writer.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto))
	require.NoError(t, l.writer.QueryRow("PRAGMA journal_size_limit").Scan(&limit))
	require.Zero(t, auto, "the new connection's automatic checkpoints are off")
	require.Equal(t, restartWALBytes, limit, "the new connection cuts the WAL back when it starts over")
}

// TestSQLite_WALStaysBoundedUnderSteadyWrites: with writes never pausing,
// background checkpoints alone never let the WAL start over; the writer's
// own must, once the WAL has reached maxWALBytes, however fast the writer
// runs. The WAL must start over again and again, never grow past
// maxWALBytes by more than one transaction of confirmations, and its file
// must be cut back each time. First without the checkpointer, as on a
// machine where the writer writes far more than maxWALBytes between two
// of its runs; then with it, whose checkpoints the writer's must not
// collide with.
func TestSQLite_WALStaysBoundedUnderSteadyWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{{"checkpointer outrun", 0}, {"checkpointer running", checkpointInterval}} {
		t.Run(tc.name, func(t *testing.T) { testWALStaysBounded(t, tc.every) })
	}
}

func testWALStaysBounded(t *testing.T, checkpointEvery time.Duration) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := openSQLite(path, Options{}, checkpointEvery)
	require.NoError(t, err)
	defer l.Close()

	const wantRestarts = 3
	first, size := readWALHeader(t, path)
	var (
		largest int64 // the most one transaction of confirmations made the file grow
		longest int64 // the file's largest size
		seq     = first
	)
	for i := 0; seq-first < wantRestarts; i++ {
		confirmStatement(t, l, i)
		nextSeq, nextSize := readWALHeader(t, path)
		if nextSeq == seq {
			largest = max(largest, nextSize-size)
		} else if size > restartWALBytes {
			require.Less(t, nextSize, size, "the WAL file was cut back when it started over")
		}
		seq, size = nextSeq, nextSize
		longest = max(longest, size)
		require.LessOrEqual(t, size, int64(maxWALBytes)+largest,
			"the WAL grew past its bound by more than one transaction (%d statements, %d new starts)", i+1, seq-first)
	}
	t.Logf("largest WAL file %d KiB; one transaction grew it by up to %d KiB", longest>>10, largest>>10)
}

// TestSQLite_WALStartsOverAfterTheCheckpointer: once the WAL is longer than
// restartWALBytes and the checkpointer has copied it back since the
// writer's last transaction, the writer's next transaction starts the WAL
// over, long before maxWALBytes.
func TestSQLite_WALStartsOverAfterTheCheckpointer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := openSQLite(path, Options{}, 0)
	require.NoError(t, err)
	defer l.Close()

	first, size := readWALHeader(t, path)
	i := 0
	for ; size <= restartWALBytes; i++ {
		confirmStatement(t, l, i)
		_, size = readWALHeader(t, path)
	}
	confirmStatement(t, l, i)
	seq, _ := readWALHeader(t, path)
	require.Equal(t, first, seq, "without the checkpointer's run, the WAL goes on until maxWALBytes")

	require.NoError(t, l.checkpoints.runOnce())
	confirmStatement(t, l, i+1)
	seq, size = readWALHeader(t, path)
	require.Equal(t, first+1, seq, "the WAL started over")
	require.LessOrEqual(t, size, int64(restartWALBytes), "and its file was cut back")
}

// TestSQLite_WALRestartWaitsForReaders: a reader of frames the writer's
// checkpoint copies back delays the WAL's new start until it is done, as
// long as the busy timeout; confirmations go on meanwhile.
func TestSQLite_WALRestartWaitsForReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	var logs bytes.Buffer
	l, err := openSQLite(path, Options{BusyTimeout: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, 0)
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()

	first, size := readWALHeader(t, path)
	i := 0
	for ; size < maxWALBytes; i++ {
		confirmStatement(t, l, i)
		_, size = readWALHeader(t, path)
	}
	// A read transaction whose snapshot holds the WAL's frames.
	reader, err := l.readers.BeginTx(ctx, nil)
	require.NoError(t, err)
	var n int
	require.NoError(t, reader.QueryRow("SELECT count(*) FROM entries").Scan(&n))
	confirmStatement(t, l, i)
	seq, _ := readWALHeader(t, path)
	require.Equal(t, first, seq, "the WAL did not start over under a reader")
	require.Contains(t, logs.String(), errReadersHoldWAL.Error())
	require.NoError(t, reader.Rollback())

	confirmStatement(t, l, i+1)
	seq, _ = readWALHeader(t, path)
	require.Equal(t, first+1, seq, "the WAL started over once the reader was done")
}

// confirmStatement records and confirms a 100-row statement, the i-th,
// over 997 subjects.
func confirmStatement(t *testing.T, l *SQLite, i int) {
	t.Helper()
	ctx := context.Background()
	entries := make([]Entry, 100)
	for j := range entries {
		k := i*100 + j
		entries[j] = entry("public.docs", strconv.Itoa(k), "subject"+strconv.Itoa(k%997))
	}
	id, err := l.Intend(ctx, entries)
	require.NoError(t, err)
	require.NoError(t, l.Confirm(ctx, id))
}

// readWALHeader returns the checkpoint sequence number in the header of the
// WAL of the SQLite file at path, which SQLite increments each time the WAL
// starts over (https://www.sqlite.org/fileformat2.html#walformat), and the
// WAL file's size; zeros when there is none.
func readWALHeader(t *testing.T, path string) (seq uint32, size int64) {
	t.Helper()
	f, err := os.Open(path + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0
	}
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	header := make([]byte, 16)
	if _, err := f.ReadAt(header, 0); errors.Is(err, io.EOF) {
		return 0, fi.Size()
	} else {
		require.NoError(t, err)
	}
	return binary.BigEndian.Uint32(header[12:]), fi.Size()
}
