package capture

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// decisionLog is a ledger that records the decisions it is given, in order.
type decisionLog struct {
	ledger.Ledger
	mu     sync.Mutex
	events []string
	ids    map[ledger.IntentID]string
}

func (l *decisionLog) note(event string, id ledger.IntentID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf("%s %d", event, id))
	if l.ids == nil {
		l.ids = map[ledger.IntentID]string{}
	}
	l.ids[id] = event
}

func (l *decisionLog) ConfirmAll(_ context.Context, ids []ledger.IntentID) []error {
	for _, id := range ids {
		l.note("confirm", id)
	}
	return make([]error, len(ids))
}

func (l *decisionLog) Drop(_ context.Context, id ledger.IntentID) error {
	l.note("drop", id)
	return nil
}

func (l *decisionLog) MarkDeleted(_ context.Context, _ ledger.Store, _ string, ids []string) error {
	l.note("delete "+ids[0], 0)
	return nil
}

func (l *decisionLog) MarkTableDeleted(_ context.Context, _ ledger.Store, table string) error {
	l.note("delete table "+table, 0)
	return nil
}

func (l *decisionLog) decided() map[ledger.IntentID]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[ledger.IntentID]string{}
	for id, e := range l.ids {
		out[id] = e
	}
	return out
}

func TestDecisions_EveryConfirmationQueuedDuringOrAfterAHoldIsMade(t *testing.T) {
	l := &decisionLog{}
	c := New(Config{Ledger: l, ConfirmHold: 5 * time.Millisecond})
	defer c.Close()
	// Confirmations from several relays at uneven times, so that some
	// arrive while the worker holds others, some as a hold ends, and some
	// when it holds none.
	const relays, each = 8, 200
	var wg sync.WaitGroup
	for r := range relays {
		wg.Go(func() {
			for i := range each {
				c.Confirm([]ledger.IntentID{ledger.IntentID(r*each + i + 1)})
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool { return len(l.decided()) == relays*each }, 30*time.Second, 5*time.Millisecond,
		"every confirmation reaches the ledger without a later one to wake the worker")
}

func TestDecisions_ConfirmationsBeforeADeleteAreMadeFirstAndDropsAtOnce(t *testing.T) {
	l := &decisionLog{}
	c := New(Config{Ledger: l, ConfirmHold: time.Hour})
	c.Confirm([]ledger.IntentID{1})
	c.Drop([]ledger.IntentID{2})
	require.Eventually(t, func() bool { return l.decided()[2] == "drop" }, 10*time.Second, time.Millisecond,
		"a drop is not held")
	require.NotContains(t, l.decided(), ledger.IntentID(1), "a confirmation is held")
	c.Deleted(ledger.StorePostgres, []extract.Tag{{Table: "public.docs", ID: "r1"}})
	c.Confirm([]ledger.IntentID{3})
	c.Close()
	require.Equal(t, []string{"drop 2", "confirm 1", "delete r1 0", "confirm 3"}, l.events)
}

func TestDecisions_ConfirmationsBeforeATableDeleteAreMadeFirst(t *testing.T) {
	l := &decisionLog{}
	c := New(Config{Ledger: l, ConfirmHold: time.Hour})
	c.Confirm([]ledger.IntentID{1})
	c.TablesDeleted(ledger.StorePinecone, []string{"docs/ns1"})
	c.Confirm([]ledger.IntentID{2})
	c.Close()
	require.Equal(t, []string{"confirm 1", "delete table docs/ns1 0", "confirm 2"}, l.events)
}

// AfterQueued's function runs once the decisions queued before it are in
// the ledger, held confirmations included, and before later ones.
func TestDecisions_AfterQueuedRunsOnceEarlierDecisionsAreInTheLedger(t *testing.T) {
	l := &decisionLog{}
	c := New(Config{Ledger: l, ConfirmHold: time.Hour})
	c.Confirm([]ledger.IntentID{1})
	ran := make(chan []string, 1)
	c.AfterQueued(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		ran <- append([]string(nil), l.events...)
	})
	c.Confirm([]ledger.IntentID{2})
	select {
	case seen := <-ran:
		require.Equal(t, []string{"confirm 1"}, seen, "the held confirmation was made first, the later one not yet")
	case <-time.After(30 * time.Second):
		t.Fatal("AfterQueued's function never ran while a confirmation was held")
	}
	c.Close()
	require.Equal(t, []string{"confirm 1", "confirm 2"}, l.events)
}

func TestDecisions_ManyConfirmationsFlushBeforeTheHoldEnds(t *testing.T) {
	l := &decisionLog{}
	c := New(Config{Ledger: l, ConfirmHold: time.Hour})
	defer c.Close()
	for i := range maxHeldConfirms {
		c.Confirm([]ledger.IntentID{ledger.IntentID(i + 1)})
	}
	require.Eventually(t, func() bool { return len(l.decided()) == maxHeldConfirms }, 10*time.Second, time.Millisecond)
}

func TestDecisionQueue_HeldConfirmationsDoNotWakeTheWorkerButAreReported(t *testing.T) {
	var q decisionQueue
	q.init()
	woken := func() bool {
		select {
		case <-q.wake:
			return true
		default:
			return false
		}
	}
	q.put(decision{confirm: true, ids: []ledger.IntentID{1}})
	require.True(t, woken(), "a confirmation wakes a worker that holds none")
	items, _ := q.take()
	require.Len(t, items, 1)

	require.False(t, q.setHolding(2), "nothing queued")
	q.put(decision{confirm: true, ids: []ledger.IntentID{2}})
	require.False(t, woken(), "the worker takes it when its hold ends")
	require.True(t, q.setHolding(0), "a worker whose hold ended learns of it, and takes it at once")
	q.put(decision{confirm: true, ids: []ledger.IntentID{3}})
	require.True(t, woken(), "then confirmations wake it again")

	q.setHolding(2)
	for range maxQueued + 1 {
		q.put(decision{confirm: true}) // would block, or pile up unseen, if queued
	}
	require.False(t, woken())
	q.put(decision{ids: []ledger.IntentID{4}})
	require.True(t, woken(), "a drop always wakes it")
	q.put(decision{confirm: true, ids: []ledger.IntentID{5, 6}})
	require.True(t, woken(), "so does a confirmation that fills the hold")
}
