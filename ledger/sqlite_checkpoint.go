package ledger

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"time"
)

// Checkpoints copy the WAL's pages back into the database file and fsync
// it. SQLite runs one inside the commit that makes the WAL cross
// wal_autocheckpoint; when that commit was an intent's, a client's Sync
// waited while tens of megabytes of confirmations were written back (0.1
// to 0.3 s on a shared VM disk). So the writer does not checkpoint inside
// its commits. Instead:
//
//   - a checkpointer goroutine, on a connection of its own, runs a PASSIVE
//     checkpoint every checkpointInterval. In WAL mode that runs beside the
//     writer without blocking it and copies back nearly everything;
//   - under a steady load it can never copy back the frames committed
//     while it ran, and SQLite starts the WAL again from its beginning only
//     after a checkpoint that copied back every frame. So once the WAL
//     holds restartFrames frames, the writer itself checkpoints before a
//     transaction of confirmations when no intent is waiting and no such
//     transaction committed since the checkpointer's last run: nothing is
//     written meanwhile, so that checkpoint copies back only the intents
//     written since that run, and the transaction restarts the WAL. When
//     bulk writes never leave such a gap, the writer checkpoints anyway
//     once the WAL holds 4 × restartFrames, which bounds the file. The file then stays a
//     fixed size, overwritten in place, and an intent's fdatasync flushes
//     its own pages without a filesystem journal commit for newly
//     allocated blocks.
const (
	checkpointInterval = 250 * time.Millisecond
	restartFrames      = 2048 // 8 MiB of 4 KiB pages
)

type checkpointer struct {
	db   *sql.DB
	log  *slog.Logger
	quit chan struct{}
	done chan struct{}
	// frames is the WAL's length in frames at the last checkpoint, which
	// started at ranAt (unix nanoseconds).
	frames, ranAt atomic.Int64
	// copied counts the frames checkpoints copied back (tests).
	copied atomic.Int64
}

func startCheckpointer(dsn string, log *slog.Logger) (*checkpointer, error) {
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	c := &checkpointer{db: db, log: log, quit: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
		start := time.Now()
		if err := c.checkpoint(context.Background(), c.db); err != nil {
			c.log.Warn("ledger checkpoint failed; the WAL grows until one succeeds", "err", err)
			continue
		}
		c.ranAt.Store(start.UnixNano())
	}
}

// checkpoint runs a PASSIVE checkpoint on db and records the WAL's length.
func (c *checkpointer) checkpoint(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var busy, frames, copied int64
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return err
	}
	c.frames.Store(frames)
	c.copied.Add(copied)
	return nil
}

// restartDue reports whether the writer should finish a checkpoint so that
// the WAL restarts: it is long, and the checkpointer's last run started
// after the last bulk write (at bulkAt), so little is left to copy back;
// or it is too long to wait for that.
func (c *checkpointer) restartDue(bulkAt time.Time) bool {
	frames := c.frames.Load()
	return frames >= restartFrames && c.ranAt.Load() > bulkAt.UnixNano() || frames >= 4*restartFrames
}

// stop ends the checkpointer; the writer's own close checkpoints last.
func (c *checkpointer) stop() {
	close(c.quit)
	<-c.done
	c.db.Close()
}
