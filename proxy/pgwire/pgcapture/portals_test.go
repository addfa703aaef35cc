package pgcapture

import (
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// TestSession_PortalsEndWithTheirTransaction: a client that binds a new
// named portal in every implicit transaction and never closes one (the
// server drops them at each transaction's end) does not make the session
// hold them all.
func TestSession_PortalsEndWithTheirTransaction(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Parse{Name: "ins", Query: "INSERT INTO public.docs (id, user_id) VALUES ($1, $2)"})))
	for i := range 10 * prunePortalsAt {
		name := "p" + strconv.Itoa(i)
		b := &pgproto3.Bind{DestinationPortal: name, PreparedStatement: "ins", Parameters: [][]byte{[]byte(name), []byte("ann@example.com")}}
		require.Nil(t, s.ClientMessage(wire(t, b)))
		require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Execute{Portal: name})))
		require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Sync{})))
		s.ServerMessage(wire(t, &pgproto3.BindComplete{}))
		s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte("INSERT 0 1")}))
		s.ServerMessage(wire(t, ready('I')))
		require.LessOrEqual(t, len(s.portals.byName), prunePortalsAt)
	}
}

// TestSession_PortalsOutliveUnansweredSyncsAndOpenBlocks: a portal is
// forgotten only once the server reported idle after it was bound, never
// while its transaction may still be open.
func TestSession_PortalsOutliveUnansweredSyncsAndOpenBlocks(t *testing.T) {
	b := newPortalBook()
	keep := &portal{}
	sent := uint64(0)              // requests sent (exchanges.sent)
	b.bind("in-block", keep, sent) // bound in an explicit block: answered 'T'
	sent++
	b.ready('T', 1)
	b.bind("after-sync", keep, sent) // its Sync is not answered yet
	sent++
	b.bind("old", keep, sent)
	for i := range prunePortalsAt {
		b.bind(strconv.Itoa(i), keep, sent)
	}
	b.prune()
	require.Same(t, keep, b.get("in-block"))
	require.Same(t, keep, b.get("after-sync"))
	require.Same(t, keep, b.get("old"))

	b.ready('I', 2) // the second Sync: the block ended with it
	b.bind("new", keep, sent)
	b.prune()
	require.Nil(t, b.get("in-block"))
	require.Nil(t, b.get("after-sync"))
	require.Same(t, keep, b.get("old"), "bound after the Sync the server answered idle")
	require.Same(t, keep, b.get("new"))
}

// TestSession_FunctionCallInsideABatchEndsTheSession: a FunctionCall is
// ignored after an error in a batch like a Query, and outside one it is
// answered by one ReadyForQuery, which the tracker pairs with it.
func TestSession_FunctionCallInsideABatchEndsTheSession(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	defer s.capture.Close()
	call := wire(t, &pgproto3.FunctionCall{Function: 42})
	require.Nil(t, s.ClientMessage(call), "outside a batch")
	s.ServerMessage(wire(t, ready('I')))

	// The call's ReadyForQuery is its own: the write after it is
	// confirmed by its Sync's.
	exchange(t, s,
		[]pgwire.Message{
			wire(t, &pgproto3.Parse{Query: "INSERT INTO public.docs (id, user_id) VALUES ('d1', 'ann@example.com')"}),
			wire(t, &pgproto3.Bind{}), wire(t, &pgproto3.Execute{}), wire(t, &pgproto3.Sync{}),
		},
		[]pgwire.Message{
			wire(t, &pgproto3.ParseComplete{}), wire(t, &pgproto3.BindComplete{}),
			wire(t, &pgproto3.CommandComplete{CommandTag: []byte("INSERT 0 1")}), wire(t, ready('I')),
		})
	s.capture.Close()
	require.Equal(t, []string{"public.docs/d1"}, l.confirmed)

	s2, _ := memSession(t, capture.Strict)
	defer s2.capture.Close()
	require.Nil(t, s2.ClientMessage(wire(t, &pgproto3.Parse{Query: "SELECT 1"})))
	r := s2.ClientMessage(call)
	require.NotNil(t, r)
	require.True(t, r.EndSession)
}
