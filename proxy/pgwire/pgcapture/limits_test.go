package pgcapture

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
)

// sluggishLedger takes each intent slowly and records how many it was
// given at once.
type sluggishLedger struct {
	memLedger
	now, most atomic.Int64
}

func (l *sluggishLedger) Intend(ctx context.Context, es []ledger.Entry) (ledger.IntentID, error) {
	n := l.now.Add(1)
	defer l.now.Add(-1)
	for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	return l.memLedger.Intend(ctx, es)
}

// StartIntend takes the intent in the background, as the ledger's
// committer does.
func (l *sluggishLedger) StartIntend(ctx context.Context, es []ledger.Entry) ledger.Intending {
	done := make(chan ledger.Intending, 1)
	go func() { done <- ledger.Intended(l.Intend(ctx, es)) }()
	return waitFor(done)
}

type waitFor chan ledger.Intending

func (w waitFor) Wait() (ledger.IntentID, error) { return (<-w).Wait() }

func TestSession_IntentsInFlightAreBounded(t *testing.T) {
	l := &sluggishLedger{}
	s := memSessionOn(t, capture.Strict, l)
	defer s.capture.Close()
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Parse{Name: "ins", Query: "INSERT INTO public.docs (id, user_id) VALUES ($1, $2)"})))
	const writes = 20 * maxIntentsInFlight
	for i := range writes {
		b := &pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("d" + strconv.Itoa(i)), []byte("ann@example.com")}}
		require.Nil(t, s.ClientMessage(wire(t, b)))
		require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Execute{})))
		require.LessOrEqual(t, len(s.inflight), maxIntentsInFlight)
	}
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Sync{})))
	require.LessOrEqual(t, l.most.Load(), int64(maxIntentsInFlight), "the ledger was handed more intents at once than a session may have in flight")
	require.Len(t, l.entries, writes, "every write still has its intent")
}
