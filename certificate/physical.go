package certificate

import (
	"fmt"
	"strings"
	"time"
)

// Physical is what a v2 certificate states about the bytes a layer's
// deleted records left in the store's own pages (heap, TOAST, indexes),
// beside the logical erasure the layer's other members prove: the page
// scan's counts, never what was found in the pages.
type Physical struct {
	// Status is one of PhysicalScanned, PhysicalNotPossible,
	// PhysicalNothingDeleted and PhysicalNotScanned.
	Status string `json:"status"`
	// Reason says why the pages were not scanned; empty when scanned.
	Reason string `json:"reason"`
	// Method says how pages were read and what was looked for in them.
	Method string `json:"method"`
	// At is when the scan ran (when the state was stated, if none ran).
	At        time.Time       `json:"at"`
	Relations []RelationPages `json:"relations"`
}

// The values of Physical.Status.
const (
	PhysicalScanned        = "scanned"         // Relations say what the scan found
	PhysicalNotPossible    = "not_possible"    // a scan was asked for and could not run (Reason says why)
	PhysicalNothingDeleted = "nothing_deleted" // no deleted record's bytes to look for
	PhysicalNotScanned     = "not_scanned"     // the layer does not scan its pages
)

// RelationPages is what the scan of one relation (the table, its TOAST
// table, one index) found.
type RelationPages struct {
	Relation string `json:"relation"`
	Kind     string `json:"kind"` // heap, toast, or the index's access method
	Pages    int64  `json:"pages"`
	Scanned  int64  `json:"scanned"`
	// Holding is the pages scanned that hold any of the deleted records'
	// bytes; HoldingVector and HoldingSubject split it by what was found
	// (a page may hold both).
	Holding        int64  `json:"holding"`
	HoldingVector  int64  `json:"holding_vector"`
	HoldingSubject int64  `json:"holding_subject"`
	Coverage       string `json:"coverage"` // CoverageAll or CoverageSampled
	TookMS         int64  `json:"took_ms"`
}

// The values of RelationPages.Coverage.
const (
	CoverageAll     = "all"             // every page of the relation was scanned
	CoverageSampled = "targeted+sample" // the pages the deleted rows were in, and a random sample
)

// checkPhysical is the part of check 15 that concerns one layer's physical
// section: its counts must be able to be true. It returns why not, or "".
func checkPhysical(at string, ph *Physical) string {
	switch ph.Status {
	case PhysicalScanned:
		if len(ph.Relations) == 0 {
			return at + ": status scanned, but no relation is listed"
		}
	case PhysicalNotPossible, PhysicalNothingDeleted, PhysicalNotScanned:
		if len(ph.Relations) != 0 {
			return fmt.Sprintf("%s: status %s, but relations are listed: only a scan has relations", at, ph.Status)
		}
	default:
		return fmt.Sprintf("%s.status %q is not scanned, not_possible, nothing_deleted or not_scanned", at, ph.Status)
	}
	var pages int64
	for i, r := range ph.Relations {
		rel := fmt.Sprintf("%s.relations[%d]", at, i)
		for _, n := range []struct {
			name string
			v    int64
		}{{"pages", r.Pages}, {"scanned", r.Scanned}, {"holding", r.Holding}, {"holding_vector", r.HoldingVector},
			{"holding_subject", r.HoldingSubject}, {"took_ms", r.TookMS}} {
			if n.v < 0 {
				return fmt.Sprintf("%s.%s %d is negative", rel, n.name, n.v)
			}
		}
		switch {
		case r.Scanned > r.Pages:
			return fmt.Sprintf("%s scanned %d pages of %d", rel, r.Scanned, r.Pages)
		case r.Holding > r.Scanned:
			return fmt.Sprintf("%s has %d pages holding the bytes of %d scanned", rel, r.Holding, r.Scanned)
		case r.HoldingVector > r.Holding || r.HoldingSubject > r.Holding:
			return fmt.Sprintf("%s: holding_vector %d or holding_subject %d exceeds holding %d", rel, r.HoldingVector, r.HoldingSubject, r.Holding)
		// holding <= holding_vector + holding_subject, written so that it
		// cannot overflow (holding_vector <= holding here): the sum may be
		// beyond 64 bits, and the spec compares exactly.
		case r.Holding-r.HoldingVector > r.HoldingSubject:
			return fmt.Sprintf("%s: holding %d exceeds holding_vector %d plus holding_subject %d", rel, r.Holding, r.HoldingVector, r.HoldingSubject)
		}
		switch r.Coverage {
		case CoverageAll:
			if r.Scanned != r.Pages {
				return fmt.Sprintf("%s: coverage all, but %d of %d pages scanned", rel, r.Scanned, r.Pages)
			}
		case CoverageSampled:
		default:
			return fmt.Sprintf("%s.coverage %q is not %q or %q", rel, r.Coverage, CoverageAll, CoverageSampled)
		}
		// Pages bound every other count, so their sums cannot overflow
		// when this one does not.
		if pages += r.Pages; pages < 0 {
			return at + ": the relations' page counts overflow"
		}
	}
	return ""
}

// Totals sums a scan's relations: pages, pages scanned, pages holding
// the bytes, and whether every relation was scanned whole.
func (ph *Physical) Totals() (pages, scanned, holding int64, whole bool) {
	whole = true
	for _, r := range ph.Relations {
		pages, scanned, holding = pages+r.Pages, scanned+r.Scanned, holding+r.Holding
		whole = whole && r.Coverage == CoverageAll
	}
	return pages, scanned, holding, whole
}

// state is the layer's physical state in a few words, as every verifier
// prints it (docs/certificate.md, "Physical state").
func (ph *Physical) state() string {
	if ph == nil {
		return "not scanned"
	}
	switch ph.Status {
	case PhysicalScanned:
		pages, scanned, holding, whole := ph.Totals()
		switch {
		case holding > 0:
			return fmt.Sprintf("%d of %d pages scanned still hold the bytes", holding, scanned)
		case whole:
			return fmt.Sprintf("clean in all %d pages", scanned)
		}
		return fmt.Sprintf("clean in the %d pages scanned of %d", scanned, pages)
	case PhysicalNotPossible:
		return "scan not possible"
	case PhysicalNothingDeleted:
		return "nothing deleted to look for"
	}
	return "not scanned"
}

// PhysicalSummary is the physical state of each layer of a v2 or v3 payload,
// "<store> <table>: <state>" joined by "; ", as every verifier prints it
// beside a valid verdict; "" for a v1 payload, which states none.
func PhysicalSummary(p *Payload) string {
	if p == nil || (p.Schema != SchemaV2 && p.Schema != SchemaV3) {
		return ""
	}
	parts := make([]string, len(p.Layers))
	for i, l := range p.Layers {
		parts[i] = l.Store + " " + l.Table + ": " + l.Physical.state()
	}
	return strings.Join(parts, "; ")
}
