package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
)

// horizon asks every store's HorizonFunc when the copies a delete does
// not reach are expected to be gone, for deletes done by deleted: the
// entries of the stores that have a layer in st, in the order given.
func (e *Engine) horizon(ctx context.Context, st *journalState, deleted time.Time) []connector.Horizon {
	stores := map[string]bool{}
	for _, l := range st.Layers {
		stores[l.Store] = true
	}
	var out []connector.Horizon
	for _, f := range e.cfg.Horizons {
		for _, h := range f(ctx, deleted) {
			if stores[string(h.Store)] {
				out = append(out, h)
			}
		}
	}
	return out
}

// certificateHorizon is the horizon as a certificate states it.
func certificateHorizon(hs []connector.Horizon) []certificate.Horizon {
	out := make([]certificate.Horizon, 0, len(hs))
	for _, h := range hs {
		ch := certificate.Horizon{Store: string(h.Store), Copy: h.Copy, Status: h.Status, Basis: h.Basis}
		if h.Status == connector.HorizonDated {
			ch.Until = certificate.HorizonAt(h.Until)
		}
		out = append(out, ch)
	}
	return out
}

// horizonStatement is what the claim adds for a horizon: when the copies
// forget cannot reach are expected to be gone, each as its entry says,
// and the date by which all are gone when every entry is dated.
func horizonStatement(hs []certificate.Horizon) string {
	if len(hs) == 0 {
		return ""
	}
	var (
		b      strings.Builder
		latest string
		dated  = true
	)
	b.WriteString(" Copies outside the live data, which forget does not delete, remain until their horizon:")
	for i, h := range hs {
		sep := ";"
		if i == len(hs)-1 {
			sep = "."
		}
		switch h.Status {
		case certificate.HorizonDated:
			fmt.Fprintf(&b, " %s %s until %s (%s)%s", h.Store, h.Copy, h.Until, h.Basis, sep)
			latest = max(latest, h.Until) // RFC 3339 UTC times order as text
		case certificate.HorizonConditional:
			dated = false
			fmt.Fprintf(&b, " %s %s until a condition holds: %s%s", h.Store, h.Copy, h.Basis, sep)
		default:
			dated = false
			fmt.Fprintf(&b, " %s %s unknown: %s%s", h.Store, h.Copy, h.Basis, sep)
		}
	}
	if dated {
		fmt.Fprintf(&b, " The WAL, archives and backups named hold copies until %s at the latest.", latest)
	} else {
		b.WriteString(" No date can be given for the copies that wait for a condition or are unknown.")
	}
	return b.String()
}

// HorizonStatus is one kind of copy of a completed request whose horizon
// is still open: dated after now, conditional or unknown.
type HorizonStatus = connector.Horizon

// openHorizons is the entries of hs still open at now.
func openHorizons(hs []connector.Horizon, now time.Time) []HorizonStatus {
	var out []HorizonStatus
	for _, h := range hs {
		if h.Status == connector.HorizonDated && !h.Until.After(now) {
			continue
		}
		out = append(out, h)
	}
	return out
}
