package walfollow

import (
	"context"

	"github.com/lethe-privacy/lethe/ledger"
)

// Core is the capture core the follower records through
// (capture.Capture): the follower reads and batches rows and confirms its
// slot, and the core hashes their subjects with its salt, says which
// subjects were forgotten, writes the changes into its ledger and decides
// the fate of a late write. The follower never holds the hasher, the
// tombstones or the ledger's write side itself.
type Core interface {
	// HashSubject is the ledger's form of a subject as stored.
	HashSubject(subject string) ledger.SubjectHash
	// Forgotten reports a subject that was forgotten: a committed row
	// about one is a late write.
	Forgotten(ledger.SubjectHash) bool
	// Observe records changes in order in one transaction; durable waits
	// for the disk (ledger.Observer.Observe), else it returns once they
	// are committed (ObserveNoSync). The follower confirms a position to
	// the server only once a durable Observe covering it has returned.
	Observe(ctx context.Context, changes []ledger.Change, durable bool) error
	// LateWrite is handed each late write once its row is durable and
	// before the slot moves past it, so a crash or an error hands it over
	// again: the core logs it and, by its policy, deletes it (subject as
	// stored).
	LateWrite(ctx context.Context, store ledger.Store, table, subject string) error
}
