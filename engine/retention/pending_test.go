package retention

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

// pendingWatch is the sweep's ledger; it closes read once the sweep has
// asked for the pending intents after marking a batch, which is when the
// test's "proxy" confirms its held intent.
type pendingWatch struct {
	*ledger.SQLite
	once sync.Once
	read chan struct{}
}

func (p *pendingWatch) Pending(ctx context.Context) ([]ledger.Intent, error) {
	defer p.once.Do(func() { close(p.read) })
	return p.SQLite.Pending(ctx)
}

// A proxy holds confirmations (capture's ConfirmHold, 10 s by default):
// a record written a moment before the sweep deletes it is still pending
// when the sweep marks it deleted, and its confirmation comes after. The
// ledger must still say deleted once the proxy has confirmed it.
func TestSweep_RecordConfirmedAfterTheSweepDeletedItStaysDeleted(t *testing.T) {
	ctx := context.Background()
	te := enginetest.New(t, time.Hour)
	now := te.Now()
	docs := &fakeRetainer{name: "public.docs", records: aged(now, 2, 1, 0)}
	te.Record(t, "alice", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "old-b"},
		ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "new-a"})
	held, err := te.Ledger.Intend(ctx, []ledger.Entry{{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "old-a", Subject: te.Hasher.Hash("alice")}})
	require.NoError(t, err)

	watch := &pendingWatch{SQLite: te.Ledger, read: make(chan struct{})}
	swept := make(chan struct{})
	confirmed := make(chan error, 1)
	go func() {
		select {
		case <-watch.read:
		case <-swept:
		}
		confirmed <- te.Ledger.Confirm(ctx, held)
	}()
	res, err := Sweep(ctx, Config{
		Layers: []Expiring{{Retainer: docs, Retain: 90 * 24 * time.Hour, RetainBy: "created_at"}},
		Ledger: watch, Certifier: te.Certifier, Now: te.Now, PendingWait: time.Minute,
	})
	close(swept)
	require.NoError(t, err)
	require.True(t, res.Clean())
	require.NoError(t, <-confirmed)

	records, err := te.Ledger.BySubject(ctx, te.Hasher.Hash("alice"))
	require.NoError(t, err)
	states := map[string]ledger.State{}
	for _, r := range records {
		states[r.RecordID] = r.State
	}
	assert.Equal(t, map[string]ledger.State{"old-a": ledger.StateDeleted, "old-b": ledger.StateDeleted, "new-a": ledger.StateConfirmed}, states)
}
