package pgcapture

import "sync/atomic"

// exchanges pairs requests with their answers. The server answers every
// Query, Sync and FunctionCall with one ReadyForQuery, in order: the n-th
// ReadyForQuery answers the n-th such message. Three parts of a session
// ask that question: may a request sent earlier still change a setting
// (reading.go), has a portal's transaction ended (portals.go), has DDL's
// transaction ended (ddl.go).
type exchanges struct {
	sent     atomic.Uint64 // Query, Sync and FunctionCall messages forwarded (client side)
	answered atomic.Uint64 // ReadyForQuery messages seen (server side)
}

// open reports whether a request sent is not yet answered.
func (e *exchanges) open() bool { return e.sent.Load() != e.answered.Load() }
