package pgwing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// SlotStatus is the replication slot named name in capture.store's
// database (lethe-proxy wal status); Exists is false when there is none.
func SlotStatus(ctx context.Context, c config.Capture, name string) (walfollow.Slot, error) {
	var s walfollow.Slot
	err := withSlotConn(ctx, c, func(conn *pgx.Conn) (err error) {
		s, err = walfollow.SlotStatus(ctx, conn, name)
		return err
	})
	return s, err
}

// DropSlot drops the replication slot named name and its publications
// (lethe-proxy wal drop); the proxies that follow it must be stopped.
func DropSlot(ctx context.Context, c config.Capture, name string) error {
	return withSlotConn(ctx, c, func(conn *pgx.Conn) error { return walfollow.Drop(ctx, conn, name) })
}

func withSlotConn(ctx context.Context, c config.Capture, f func(*pgx.Conn) error) error {
	store, err := OpenStore(ctx, c, "wal status and drop ask the database about the replication slot")
	if err != nil {
		return err
	}
	defer store.Close()
	return store.WithConn(ctx, f)
}

// AwaitFollower waits, within ctx, until the WAL follower has recorded in
// the ledger every row committed before the call, as forget's preview
// does, so that a command reading the ledger lists a row written a moment
// ago. It opens the ledger with openLedger for the wait alone (the slot's
// initial read is marked there) and closes it again. It returns at once
// without the follower (capture.wal off). When no proxy streams the slot
// (after grace, for a proxy that has just started) or the wait fails, its
// error says so in a sentence that ends with what the reader then gets:
// the ledger as it is.
func AwaitFollower(ctx context.Context, c config.Capture, openLedger func() (*ledger.Handle, string, error), grace time.Duration) error {
	if !c.Follows() {
		return nil
	}
	l, where, err := openLedger()
	if err != nil {
		return fmt.Errorf("opening %s to wait for the WAL follower: %w; reading the ledger as it is", where, err)
	}
	defer l.Close()
	store, err := OpenStore(ctx, c, "the command waits for the WAL follower")
	if err != nil {
		return fmt.Errorf("%w; reading the ledger as it is", err)
	}
	defer store.Close()
	err = store.WithConn(ctx, func(conn *pgx.Conn) error {
		return walfollow.AwaitFollowed(ctx, conn, c.WALSlot, l, grace)
	})
	switch {
	case errors.Is(err, walfollow.ErrNotFollowed):
		return notFollowed{slot: c.WALSlot}
	case err != nil:
		return fmt.Errorf("the WAL follower has not recorded every row committed so far (%w); reading the ledger as it is", err)
	}
	return nil
}

// notFollowed is AwaitFollower's walfollow.ErrNotFollowed, in words that
// name the slot and where to look.
type notFollowed struct{ slot string }

func (e notFollowed) Error() string {
	return fmt.Sprintf("no proxy follows slot %s: rows committed since one last did are not listed until a proxy runs (lethe-proxy wal status --config FILE)", e.slot)
}

func (notFollowed) Unwrap() error { return walfollow.ErrNotFollowed }
