package connector

import (
	"context"
	"time"
)

// PhysicalLayer is a Layer that can look for the bytes of the records it
// deleted in the store's own pages (heap, TOAST, indexes), after the
// delete was verified and Cleanup ran: evidence of what a DELETE leaves on
// disk, beside Residual's evidence of what a query can still see. The
// engine calls Physical once per forget of the layer, with the subject
// Delete was given; a layer configured not to look returns nil.
type PhysicalLayer interface {
	Layer
	Physical(ctx context.Context, subject string) *Physical
}

// Physical is one look at a layer's pages for the bytes of the records a
// forget deleted. It counts pages, never says what was found in them: the
// bytes looked for are held in memory only, never logged or returned.
type Physical struct {
	// Status is one of PhysicalScanned, PhysicalNotPossible and
	// PhysicalNothingDeleted.
	Status string `json:"status"`
	// Reason says why the scan was not possible, with the grant or step
	// that makes it possible; empty when Status is PhysicalScanned.
	Reason string `json:"reason,omitempty"`
	// Method says how pages were read and what was looked for in them.
	Method    string          `json:"method,omitempty"`
	At        time.Time       `json:"at"`
	Relations []RelationPages `json:"relations,omitempty"`
}

// The values of Physical.Status.
const (
	PhysicalScanned        = "scanned"
	PhysicalNotPossible    = "not_possible"
	PhysicalNothingDeleted = "nothing_deleted"
)

// Holding is the pages of every relation scanned that still hold any of
// the bytes.
func (p *Physical) Holding() int64 {
	var n int64
	for _, r := range p.Relations {
		n += r.Holding
	}
	return n
}

// Scanned is the pages scanned over every relation.
func (p *Physical) Scanned() int64 {
	var n int64
	for _, r := range p.Relations {
		n += r.Scanned
	}
	return n
}

// RelationPages is what the scan of one relation (the table, its TOAST
// table, one index) found.
type RelationPages struct {
	Relation string `json:"relation"` // schema-qualified, as the catalog names it
	Kind     string `json:"kind"`     // heap, toast, or the index's access method (btree, hnsw, ivfflat, gin…)
	Pages    int64  `json:"pages"`    // pages the relation had when scanned
	Scanned  int64  `json:"scanned"`  // pages read
	// Holding is the pages read that hold any of the bytes looked for;
	// HoldingVector and HoldingSubject split it by what was found (a page
	// can hold both).
	Holding        int64 `json:"holding"`
	HoldingVector  int64 `json:"holding_vector"`
	HoldingSubject int64 `json:"holding_subject"`
	// Coverage says which pages were read: "all" or "targeted+sample".
	Coverage string `json:"coverage"`
	TookMS   int64  `json:"took_ms"`
}
