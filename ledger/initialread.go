package ledger

import (
	"context"
	"fmt"
)

// SlotKey names one logical replication slot: the server (its system
// identifier, pg_control_system().system_identifier, so that another
// server or a server initialised afresh does not match), the database the
// slot decodes, and the slot's name.
type SlotKey struct {
	System, Database, Slot string
}

func (k SlotKey) String() string {
	return fmt.Sprintf("slot %s of database %s on server %s", k.Slot, k.Database, k.System)
}

// InitialReads records, per replication slot, that the rows the WAL
// follower's tables held when the slot was created are durable in this
// ledger: the slot's stream carries only what was committed after its
// creation, so a slot exists for this ledger only once that mark does.
// The WAL follower writes it; forget's wait for the follower reads it.
// Both backends implement it.
type InitialReads interface {
	// InitialReadDone reports whether the ledger holds key's mark.
	InitialReadDone(ctx context.Context, key SlotKey) (bool, error)
	// MarkInitialRead records key's mark durably. The follower calls it
	// once the slot's initial rows are durable (Observe returned).
	MarkInitialRead(ctx context.Context, key SlotKey) error
	// ClearInitialRead removes key's mark durably, if there is one. The
	// follower calls it before it creates a slot of that name, so that a
	// mark left from an earlier slot never vouches for the new one.
	ClearInitialRead(ctx context.Context, key SlotKey) error
}

var (
	_ InitialReads = (*SQLite)(nil)
	_ InitialReads = (*Postgres)(nil)
)
