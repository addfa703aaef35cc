package connector

import (
	"context"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Horizon is one kind of copy of a store's data that a delete does not
// remove at once (the WAL, its archives, backups, replicas, a provider's
// own retention of deleted data) and when the last copy holding the
// deleted records is expected to be gone: a date, a condition, or unknown
// with the reason. Never guessed: what the store does not say, and the
// operator did not declare, is unknown.
type Horizon struct {
	Store ledger.Store `json:"store"`
	// Copy is "pg_wal", "wal_archive", "backups", "replicas" or
	// "provider_purge" (certificate.Horizon* names them).
	Copy string `json:"copy"`
	// Status is "dated" (Until says when), "conditional" (Basis states
	// the condition) or "unknown" (Basis says why).
	Status string `json:"status"`
	// Until is when the last copy is expected to be gone; zero unless
	// Status is "dated".
	Until time.Time `json:"until,omitzero"`
	// Basis says what the date was computed from, the condition the copy
	// waits for, or why it is unknown and what would make it known. It
	// names no subject and no record.
	Basis string `json:"basis"`
}

// The values of Horizon.Status.
const (
	HorizonDated       = "dated"
	HorizonConditional = "conditional"
	HorizonUnknown     = "unknown"
)

// HorizonFunc states a store's horizons for deletes that committed by
// deleted (forget calls it once per request, after every layer is done,
// before it certifies). It never fails: what it cannot learn it states
// as unknown, with the reason.
type HorizonFunc func(ctx context.Context, deleted time.Time) []Horizon
