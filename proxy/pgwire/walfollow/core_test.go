package walfollow

import (
	"context"

	"github.com/lethe-privacy/lethe/ledger"
)

// testCore is the capture core as the follower sees it (Core), over a
// ledger of the test's: it hashes with the tests' hasher, reports the
// subjects forgotten says are, and hands late writes to lateWrite (nil:
// only kept).
type testCore struct {
	observer  ledger.Observer
	forgotten func(ledger.SubjectHash) bool
	lateWrite func(ctx context.Context, table, subject string) error
}

func (c *testCore) HashSubject(subject string) ledger.SubjectHash { return hasher.Hash(subject) }

func (c *testCore) Forgotten(s ledger.SubjectHash) bool {
	return c.forgotten != nil && c.forgotten(s)
}

func (c *testCore) Observe(ctx context.Context, changes []ledger.Change, durable bool) error {
	if durable {
		return c.observer.Observe(ctx, changes)
	}
	return c.observer.ObserveNoSync(ctx, changes)
}

func (c *testCore) LateWrite(ctx context.Context, store ledger.Store, table, subject string) error {
	if c.lateWrite == nil {
		return nil
	}
	return c.lateWrite(ctx, table, subject)
}
