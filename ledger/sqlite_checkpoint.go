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
//     holds restartFrames frames, the writer itself checkpoints after a
//     transaction of confirmations when no intent is waiting: nothing is
//     written meanwhile, so that checkpoint copies back the few frames left
//     and the next transaction restarts the WAL. The file then stays a
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
	// frames is the WAL's length in frames at the last checkpoint.
	frames atomic.Int64
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
		if err := c.checkpoint(context.Background(), c.db); err != nil {
			c.log.Warn("ledger checkpoint failed; the WAL grows until one succeeds", "err", err)
		}
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

// restartDue reports whether the WAL is long enough for the writer to
// finish a checkpoint so that it restarts.
func (c *checkpointer) restartDue() bool { return c.frames.Load() >= restartFrames }

// stop ends the checkpointer; the writer's own close checkpoints last.
func (c *checkpointer) stop() {
	close(c.quit)
	<-c.done
	c.db.Close()
}
