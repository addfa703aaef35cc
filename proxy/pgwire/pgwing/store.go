package pgwing

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// storeConnectTimeout bounds connecting to capture.store (within the
// caller's own deadline, if sooner): a server that does not answer fails
// the command or the start with the reason instead of hanging.
const storeConnectTimeout = 30 * time.Second

// OpenStore connects to capture.store, the connection string of the role
// that owns capture.tables: what the proxy's recovery, catalog reads,
// forget and the WAL settle wait, and the check, reconcile, sweep and wal
// commands, all read and delete through. Its TLS and timeouts are the
// connection string's (sslmode, connect_timeout), the same for every
// caller. use says what needs it ("reconcile reads the tables"), for the
// error when it is not set. (The WAL follower's replication connection is
// made by walfollow itself, from the same string.)
func OpenStore(ctx context.Context, c config.Capture, use string) (*pgstore.Store, error) {
	if c.Store == "" {
		return nil, fmt.Errorf("capture.store is not set: %s through it; set it to a connection string of the role that owns capture.tables (give the password via PGPASSWORD or ~/.pgpass, not in the file)", use)
	}
	ctx, cancel := context.WithTimeout(ctx, storeConnectTimeout)
	defer cancel()
	store, err := pgstore.Open(ctx, c.Store)
	if err != nil {
		return nil, fmt.Errorf("connecting with capture.store: %w", err)
	}
	return store, nil
}
