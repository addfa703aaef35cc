package walfollow

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/ledger"
)

// ErrNotFollowed is AwaitFollowed's finding that no proxy streams the
// slot: rows committed since one last did are not in the ledger until a
// proxy runs.
var ErrNotFollowed = errors.New("no proxy follows the slot")

// AwaitFollowed is AwaitCommitted for a reader that is not the follower
// (lethe-proxy ledger): it first waits, up to grace, for a proxy to stream
// the slot named name (one that has just started may not yet), and
// returns ErrNotFollowed when none does, instead of waiting for a slot
// that nothing advances.
func AwaitFollowed(ctx context.Context, conn *pgx.Conn, name string, reads ledger.InitialReads, grace time.Duration) error {
	for since := time.Now(); ; {
		s, err := SlotStatus(ctx, conn, name)
		if err != nil {
			return err
		}
		if s.Active {
			return AwaitCommitted(ctx, conn, name, reads)
		}
		if time.Since(since) > grace {
			return ErrNotFollowed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
