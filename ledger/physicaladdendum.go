package ledger

import (
	"context"
	"time"
)

// PhysicalAddendum is one entry of what became of a completed forget's
// layer pages after its certificate: the certified state when it stated
// residue (Kind AddendumCertified), the re-scan after the batched
// physical step it was deferred to (AddendumBatch), each later re-scan
// (AddendumRescan), and the end of re-scans when the bytes to look for
// were lost (AddendumLost). Counts and words only: no bytes, no subject.
type PhysicalAddendum struct {
	RequestID string    `json:"-"`
	At        time.Time `json:"at"`
	Store     Store     `json:"store"`
	Table     string    `json:"table"`
	Kind      string    `json:"kind"`
	// Physical is the scan's result as the engine encodes it (JSON).
	Physical []byte `json:"-"`
	// NextAt is when the next re-scan is due; zero when none follows.
	NextAt time.Time `json:"next_at,omitzero"`
	// Note says in words why re-scans go on or ended.
	Note string `json:"note,omitempty"`
	// Owner is the engine that holds the bytes to look for.
	Owner string `json:"-"`
	// LogIndex is the forget.physical event's index; -1 for a certified
	// entry, which the certificate's own event covers.
	LogIndex int64 `json:"log_index"`
	// Report is the signed report the event names (lethe.report/v1), nil
	// for a certified entry.
	Report []byte `json:"-"`
}

// The kinds of PhysicalAddendum.
const (
	AddendumCertified = "certified"
	AddendumRescan    = "rescan"
	AddendumBatch     = "batch" // the re-scan after a batched physical step (physical_window)
	AddendumLost      = "lost"
)

// PhysicalAddenda keeps the physical addenda of completed forgets. Both
// backends implement it; its table is created on first use.
type PhysicalAddenda interface {
	// AddPhysicalAddendum records a.
	AddPhysicalAddendum(ctx context.Context, a PhysicalAddendum) error
	// PhysicalAddenda returns requestID's, oldest first.
	PhysicalAddenda(ctx context.Context, requestID string) ([]PhysicalAddendum, error)
	// PendingPhysicalAddenda returns, of every request's layer, the latest
	// addendum when a re-scan follows it (NextAt set).
	PendingPhysicalAddenda(ctx context.Context) ([]PhysicalAddendum, error)
}

var (
	_ PhysicalAddenda = (*SQLite)(nil)
	_ PhysicalAddenda = (*Postgres)(nil)
)

// addendumColumns is the column list both backends read and write.
const addendumColumns = `request_id, at, store, tbl, kind, physical, next_at, note, owner, log_index, report`
