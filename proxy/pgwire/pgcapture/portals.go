package pgcapture

import "sync/atomic"

// PostgreSQL destroys a named portal at the end of its transaction unless
// the client closes it first, and many clients leave that to the server.
// The session's map of portals would then grow with every portal a
// long-lived connection ever bound. It forgets them the way the server
// does: each portal remembers how many messages that end in a
// ReadyForQuery (Sync, Query, FunctionCall) the client had sent before it
// was bound; once the server reports idle ('I') in answer to a later one,
// the portal's transaction has ended, and so has the portal.

// boundPortal is a portal with the count of ReadyForQuery-ending messages
// sent before its Bind.
type boundPortal struct {
	*portal
	epoch uint64
}

// portalBook holds a session's named and unnamed portals. Bind and lookups
// come from the client side; idle from the server side.
type portalBook struct {
	byName map[string]boundPortal
	sent   uint64        // messages that end in a ReadyForQuery, sent so far
	idle   atomic.Uint64 // of those, how many had been answered when the server last reported idle
	answer uint64        // ReadyForQuery messages seen (server side only)
	// pruneAt is the size at which bind next looks for ended portals:
	// twice what a look left, so that a transaction holding many open
	// portals does not make every Bind walk them all.
	pruneAt int
}

// prunePortalsAt is how many portals the book holds before it first looks
// for ended ones, so that pruning costs nothing to a client with few.
const prunePortalsAt = 256

func newPortalBook() portalBook {
	return portalBook{byName: map[string]boundPortal{}, pruneAt: prunePortalsAt}
}

// bind records the portal name as bound now.
func (b *portalBook) bind(name string, pt *portal) {
	if len(b.byName) >= b.pruneAt {
		b.prune()
		b.pruneAt = max(prunePortalsAt, 2*len(b.byName))
	}
	b.byName[name] = boundPortal{pt, b.sent}
}

func (b *portalBook) get(name string) *portal { return b.byName[name].portal }

func (b *portalBook) close(name string) { delete(b.byName, name) }

// ended records a message sent that ends in a ReadyForQuery.
func (b *portalBook) ended() { b.sent++ }

// ready records a ReadyForQuery with its transaction status. The server
// answers in order, so the n-th ReadyForQuery answers the n-th message
// counted by ended.
func (b *portalBook) ready(status byte) {
	b.answer++
	if status == 'I' {
		b.idle.Store(b.answer)
	}
}

// prune forgets the portals bound before the last idle ReadyForQuery's
// message: their transactions ended.
func (b *portalBook) prune() {
	idle := b.idle.Load()
	for name, p := range b.byName {
		if p.epoch < idle {
			delete(b.byName, name)
		}
	}
}
