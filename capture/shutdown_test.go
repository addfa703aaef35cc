package capture

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// slowLedger takes each confirmation slowly, as a ledger behind a big COPY's
// backlog does.
type slowLedger struct {
	ledger.Ledger
	confirmed atomic.Int64
}

func (l *slowLedger) Confirm(ctx context.Context, id ledger.IntentID) error {
	select {
	case <-time.After(20 * time.Millisecond):
		l.confirmed.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *slowLedger) ConfirmAll(ctx context.Context, ids []ledger.IntentID) []error {
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = l.Confirm(ctx, id)
	}
	return errs
}

func TestCapture_ShutdownLeavesQueuedDecisionsPendingWhenTimeRunsOut(t *testing.T) {
	l := &slowLedger{}
	c := New(Config{Ledger: l})
	const queued = 300
	for i := range queued {
		c.Confirm([]ledger.IntentID{ledger.IntentID(i + 1)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	skipped := c.Shutdown(ctx)
	require.Positive(t, skipped, "some confirmations were left for recovery")
	require.Equal(t, int64(queued), skipped+l.confirmed.Load(), "every decision was either made or counted as skipped")
}

func TestCapture_ShutdownWithTimeToSpareMakesEveryDecision(t *testing.T) {
	l := &slowLedger{}
	c := New(Config{Ledger: l})
	for i := range 10 {
		c.Confirm([]ledger.IntentID{ledger.IntentID(i + 1)})
	}
	require.Zero(t, c.Shutdown(context.Background()))
	require.EqualValues(t, 10, l.confirmed.Load())
}
