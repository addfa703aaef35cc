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
	idle   atomic.Uint64 // requests answered when the server last reported idle (exchanges)
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

// bind records the portal name as bound after sent requests
// (exchanges.sent).
func (b *portalBook) bind(name string, pt *portal, sent uint64) {
	if len(b.byName) >= b.pruneAt {
		b.prune()
		b.pruneAt = max(prunePortalsAt, 2*len(b.byName))
	}
	b.byName[name] = boundPortal{pt, sent}
}

func (b *portalBook) get(name string) *portal { return b.byName[name].portal }

func (b *portalBook) close(name string) { delete(b.byName, name) }

// ready records the answered-th ReadyForQuery (exchanges.answered) with
// its transaction status.
func (b *portalBook) ready(status byte, answered uint64) {
	if status == 'I' {
		b.idle.Store(answered)
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
