package ledger

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints copy the ledger file's WAL back into the database file and
// fsync it. SQLite runs one inside the commit that makes the WAL cross
// wal_autocheckpoint, and that commit's callers wait for it. So the
// ledger file's writer does not checkpoint inside its commits. (Intents
// commit in the pending file, through another writer: none of this ever
// holds one up.) Instead:
//
//   - a checkpointer goroutine, on a connection of its own, runs a PASSIVE
//     checkpoint every checkpointInterval. In WAL mode that runs beside the
//     writer without blocking it and copies back nearly everything;
//   - but SQLite starts the WAL over from its beginning only after a
//     checkpoint that copied back every frame, which one running beside
//     steady writes never does. So before each transaction of decisions
//     the writer measures the WAL it has written (walBytes) and, between
//     its transactions, finishes a checkpoint itself (restart) when the
//     WAL is longer than restartWALBytes and the checkpointer ran after
//     the writer's last such transaction, so that little is left to copy;
//     or, however recently the checkpointer ran, once the WAL has reached
//     maxWALBytes. Its next transaction then writes from the WAL's
//     beginning.
//
// So the WAL grows past maxWALBytes by at most one transaction of
// decisions (and the writes of forget and the transparency log made
// meanwhile) whatever the checkpointer's pace against the writer's,
// unless readers still read old frames for longer than the busy timeout.
// journal_size_limit cuts the file back to restartWALBytes once the WAL
// starts over; up to that size it is overwritten in place.
const (
	checkpointInterval = 250 * time.Millisecond
	restartWALBytes    = 8 << 20
	maxWALBytes        = 4 * restartWALBytes
)

// ledgerWriterPragmas run on every connection of the ledger file's writer.
var ledgerWriterPragmas = []string{
	"PRAGMA wal_autocheckpoint = 0",
	"PRAGMA journal_size_limit = " + strconv.Itoa(restartWALBytes),
}

type checkpointer struct {
	db  *sql.DB
	wal string // the WAL file's path
	log *slog.Logger
	// mu lets one checkpoint run at a time: SQLite refuses one that starts
	// while another runs (SQLITE_BUSY, without waiting), so the writer's
	// would fail whenever the checkpointer was running.
	mu   sync.Mutex
	quit chan struct{}
	done chan struct{}
	// ranAt is when the checkpointer's last run started (unix
	// nanoseconds).
	ranAt atomic.Int64
	// copied counts the frames checkpoints reported copied back (tests).
	copied atomic.Int64
}

// startCheckpointer opens a connection to the file named by dsn, whose WAL
// is at wal, and runs a PASSIVE checkpoint on it every interval; with an
// interval of 0 only the writer checkpoints (tests: a writer that outruns
// the checkpointer).
func startCheckpointer(dsn, wal string, interval time.Duration, log *slog.Logger) (*checkpointer, error) {
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	c := &checkpointer{db: db, wal: wal, log: log, quit: make(chan struct{}), done: make(chan struct{})}
	go c.run(interval)
	return c, nil
}

func (c *checkpointer) run(interval time.Duration) {
	defer close(c.done)
	if interval <= 0 {
		<-c.quit
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
		if err := c.runOnce(); err != nil {
			c.log.Warn("ledger checkpoint failed; the writer copies the WAL back itself until one succeeds", "err", err)
		}
	}
}

// runOnce is one of the checkpointer's runs: a PASSIVE checkpoint on its
// own connection.
func (c *checkpointer) runOnce() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	if _, err := c.checkpoint(context.Background(), c.db, "PASSIVE"); err != nil {
		return err
	}
	c.ranAt.Store(start.UnixNano())
	return nil
}

// checkpoint runs a checkpoint in mode on db and reports whether it was
// cut short (busy).
func (c *checkpointer) checkpoint(ctx context.Context, db *sql.DB, mode string) (busy bool, err error) {
	var cut, frames, copied int64
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&cut, &frames, &copied); err != nil {
		return false, err
	}
	c.copied.Add(copied)
	return cut != 0, nil
}

// walBytes is the length of the WAL the writer has written since it last
// started over, as far as beyond restartWALBytes: the WAL file's size.
// SQLite appends to the file and, once the WAL starts over, writes from
// its beginning again and cuts it back to journal_size_limit
// (restartWALBytes) at the first commit.
func (c *checkpointer) walBytes() (int64, error) {
	fi, err := os.Stat(c.wal)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// restartDue reports whether the writer should finish a checkpoint before
// its next transaction, the last of which committed at lastAt: the WAL is
// long and the checkpointer has run since, so little is left to copy
// back; or it is too long to wait for that.
func (c *checkpointer) restartDue(lastAt time.Time) bool {
	n, err := c.walBytes()
	if err != nil {
		c.log.Warn("ledger: cannot measure the WAL; the writer checkpoints before each transaction until it can", "err", err)
		return true
	}
	return n > restartWALBytes && c.ranAt.Load() > lastAt.UnixNano() || n >= maxWALBytes
}

// restart finishes a checkpoint on the writer w, between its
// transactions, so that its next transaction starts the WAL over. RESTART
// mode waits, up to the busy timeout, for readers still reading frames it
// copied back (readers that start meanwhile read the database file); when
// they outlast that, the WAL goes on growing and restart reports it, for
// the writer to try again before its next transaction.
func (c *checkpointer) restart(ctx context.Context, w *sql.DB) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	busy, err := c.checkpoint(ctx, w, "RESTART")
	if err != nil {
		return err
	}
	if busy {
		return errReadersHoldWAL
	}
	return nil
}

var errReadersHoldWAL = errors.New("readers held the WAL's frames past the busy timeout")

// stop ends the checkpointer; the writer's own close checkpoints last.
func (c *checkpointer) stop() {
	close(c.quit)
	<-c.done
	c.db.Close()
}
