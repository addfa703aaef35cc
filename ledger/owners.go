package ledger

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// Owners. Every ledger handle registers itself at open as an owner: a row
// of the owners table with an id that is never reused and the handle's
// name (Options.Owner). Each intent carries the id of the handle that made
// it, so that recovery can tell the pending intents no one will resolve
// any more (orphans, see PendingOrphans) from the in-flight intents of a
// live handle. Close removes the handle's row, which makes whatever it
// left pending an orphan at once.
//
// The id, not the name, is stored on each intent: Intend, on the hot
// path, writes one more integer column and does no lookup (no foreign
// key), and the orphan query joins owners on its primary key. A name would
// repeat some thirty bytes per intent and could not tell two runs of one
// name apart.
//
// Which handles are gone differs by backend (a lease in PostgreSQL, any
// other handle in SQLite): see the package documentation.

// defaultOwner is a name unique to this open: the host, for the people
// reading the owners table, and random hex.
func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [4]byte
	rand.Read(b[:])
	return host + "/" + hex.EncodeToString(b[:])
}

// lease is a PostgreSQL handle's own view of its lease: until when, on the
// local monotonic clock, the lease it last secured lasts. The database's
// lease_until is at least as late, since the server computes it from its
// clock after the request was sent; so while check passes, no other
// handle can see this one's intents as orphans.
type lease struct {
	d     time.Duration
	start time.Time    // monotonic origin of until
	until atomic.Int64 // nanoseconds since start
}

func newLease(d time.Duration) *lease {
	return &lease{d: d, start: time.Now()}
}

// now is the time since start, to pass to secured.
func (ls *lease) now() time.Duration { return time.Since(ls.start) }

// secured records a renewal sent at sentAt (from now) that succeeded.
func (ls *lease) secured(sentAt time.Duration) {
	ls.until.Store(int64(sentAt + ls.d))
}

// lapsed reports whether the last lease secured has ended.
func (ls *lease) lapsed() bool {
	return ls.now() >= time.Duration(ls.until.Load())
}

// check refuses new intents once the lease has lapsed: other proxies may
// be resolving this handle's intents, and would drop one whose write has
// not committed yet. It is the committer's fence.
func (ls *lease) check() error {
	if ls.lapsed() {
		return fmt.Errorf("%w: this proxy's lease on the shared ledger lapsed (renewals are failing, see the logs), so other proxies may resolve its intents; new writes are refused until a renewal succeeds", ErrUnavailable)
	}
	return nil
}
