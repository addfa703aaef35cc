package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
)

// notScannedReason is the physical reason of a layer in a v2 certificate
// whose pages were not looked at.
const notScannedReason = "this layer does not scan its pages: its rule does not ask for it (physical: report, vacuum or scrub), " +
	"or its store's pages cannot be read"

// certificatePhysical is the physical section of each layer of st in a
// certificate issued at issued: nil for all of them when no layer scanned
// its pages and none is required (the certificate stays v1), else one per
// layer, not_scanned for those that do not look. required: the
// certificate is v3, whose layers all have one.
func certificatePhysical(st *journalState, issued time.Time, required bool) []*certificate.Physical {
	scanned := required
	for _, l := range st.Layers {
		scanned = scanned || l.Physical != nil
	}
	if !scanned {
		return nil
	}
	out := make([]*certificate.Physical, len(st.Layers))
	for i, l := range st.Layers {
		if l.Physical == nil {
			out[i] = &certificate.Physical{Status: certificate.PhysicalNotScanned, Reason: notScannedReason, At: issued}
			continue
		}
		out[i] = fromConnector(l.Physical)
	}
	return out
}

// fromConnector is what a layer's page scan found, as the certificate
// states it.
func fromConnector(p *connector.Physical) *certificate.Physical {
	out := &certificate.Physical{Status: p.Status, Reason: p.Reason, Method: p.Method, At: p.At.UTC(),
		Relations: make([]certificate.RelationPages, len(p.Relations))}
	for i, r := range p.Relations {
		out.Relations[i] = certificate.RelationPages{Relation: r.Relation, Kind: r.Kind, Pages: r.Pages, Scanned: r.Scanned,
			Holding: r.Holding, HoldingVector: r.HoldingVector, HoldingSubject: r.HoldingSubject, Coverage: r.Coverage, TookMS: r.TookMS}
	}
	return out
}

// physicalStatement is what the claim adds for the layers' physical
// sections: one sentence per layer whose pages a scan was asked for, and
// one for the layers not scanned. It never calls pages clean that a scan
// did not read.
func physicalStatement(layers []certificate.Layer) string {
	var b strings.Builder
	notScanned := 0
	for _, l := range layers {
		ph := l.Physical
		if ph == nil {
			continue
		}
		name := l.Store + " " + l.Table
		at := ph.At.UTC().Format(time.RFC3339Nano)
		switch ph.Status {
		case certificate.PhysicalScanned:
			pages, scanned, holding, whole := ph.Totals()
			read := fmt.Sprintf("all %d pages", scanned)
			if !whole {
				read = fmt.Sprintf("%d of the %d pages (those the deleted rows were in and a random sample; the others were not read)", scanned, pages)
			}
			if holding == 0 {
				fmt.Fprintf(&b, " A scan of %s of the table, TOAST table and indexes of %s at %s found no bytes of the deleted records.", read, name, at)
			} else {
				fmt.Fprintf(&b, " A scan of %s of the table, TOAST table and indexes of %s at %s found bytes of the deleted records still in %d of them "+
					"(dead tuples, freed page space or index entries that no step removed; its physical method names the steps that ran): "+
					"not queryable, but on disk.", read, name, at, holding)
			}
		case certificate.PhysicalNotPossible:
			fmt.Fprintf(&b, " The pages of %s could not be scanned for the deleted records' bytes (layers[].physical.reason says why).", name)
		case certificate.PhysicalNotScanned:
			notScanned++
		}
	}
	if notScanned > 0 && b.Len() > 0 {
		b.WriteString(" The pages of the layers whose physical status is not_scanned were not looked at.")
	}
	return b.String()
}
