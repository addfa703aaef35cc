package ledger

import (
	"context"
	"fmt"
	"time"
)

// StoreSeen is what a proxy last saw of a store's identity: for
// PostgreSQL the server's system identifier, its timeline and its WAL
// position. A store restored from a backup shows another identifier, a
// new timeline, or a WAL position behind the one seen; Restore then says
// which, until lethe-proxy replay re-applied the completed forgets and
// cleared it (ClearRestores). System is "" and Timeline 0 when the
// proxy's role may not read them (pg_control_*), and the WAL position is
// the only signal.
type StoreSeen struct {
	System   string
	Timeline int64
	WAL      uint64 // an LSN
	// Restore says why the store is taken to be restored; "" when it is
	// not, or replay ran since.
	Restore   string
	UpdatedAt time.Time
}

// StoreMarks keeps, per store, what the proxy last saw of it (key names
// the store, never its credentials). Both backends implement it; the
// table is made on first use.
type StoreMarks interface {
	// StoreSeen returns key's mark; ok is false when there is none.
	StoreSeen(ctx context.Context, key string) (s StoreSeen, ok bool, err error)
	// RecordStoreSeen replaces key's mark durably.
	RecordStoreSeen(ctx context.Context, key string, s StoreSeen) error
	// ClearRestores clears every mark's Restore (lethe-proxy replay ran)
	// and returns how many were set.
	ClearRestores(ctx context.Context) (int64, error)
}

var (
	_ StoreMarks = (*SQLite)(nil)
	_ StoreMarks = (*Postgres)(nil)
)

// marks is the backend's StoreMarks.
func (h *Handle) marks() (StoreMarks, error) {
	m, ok := h.capabilities.(StoreMarks)
	if !ok {
		return nil, fmt.Errorf("ledger: %T keeps no store marks", h.capabilities)
	}
	return m, nil
}

// StoreSeen implements StoreMarks on the backend.
func (h *Handle) StoreSeen(ctx context.Context, key string) (StoreSeen, bool, error) {
	m, err := h.marks()
	if err != nil {
		return StoreSeen{}, false, err
	}
	return m.StoreSeen(ctx, key)
}

// RecordStoreSeen implements StoreMarks on the backend.
func (h *Handle) RecordStoreSeen(ctx context.Context, key string, s StoreSeen) error {
	m, err := h.marks()
	if err != nil {
		return err
	}
	return m.RecordStoreSeen(ctx, key, s)
}

// ClearRestores implements StoreMarks on the backend.
func (h *Handle) ClearRestores(ctx context.Context) (int64, error) {
	m, err := h.marks()
	if err != nil {
		return 0, err
	}
	return m.ClearRestores(ctx)
}

var _ StoreMarks = (*Handle)(nil)
