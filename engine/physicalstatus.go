package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// PhysicalAddendum is one look at a completed forget's layer pages after
// its certificate, as status shows it: the certified residue (kind
// certified), a re-scan (rescan), or the end of re-scans because the
// bytes to look for were lost (lost). Report is the signed
// forget.physical report whose event the log holds at LogIndex (absent
// for certified, which the certificate covers); it verifies as any
// report (lethe-proxy verify).
type PhysicalAddendum struct {
	At       time.Time           `json:"at"`
	Store    string              `json:"store"`
	Table    string              `json:"table"`
	Kind     string              `json:"kind"`
	Physical *connector.Physical `json:"physical"`
	NextAt   *time.Time          `json:"next_at,omitempty"`
	Note     string              `json:"note"`
	LogIndex *int64              `json:"log_index,omitempty"`
	Report   json.RawMessage     `json:"report,omitempty"`
}

// physicalAddenda adds the request's physical addenda to out, and to each
// layer its latest.
func (e *Engine) physicalAddenda(ctx context.Context, out *Status) error {
	as, err := e.cfg.Ledger.PhysicalAddenda(ctx, out.RequestID)
	if err != nil {
		return err
	}
	for _, a := range as {
		out.PhysicalAddenda = append(out.PhysicalAddenda, viewAddendum(a))
	}
	for i, l := range out.Layers {
		for j := len(out.PhysicalAddenda) - 1; j >= 0; j-- {
			if a := out.PhysicalAddenda[j]; a.Store == l.Store && a.Table == l.Table {
				if a.Kind != ledger.AddendumCertified {
					out.Layers[i].PhysicalLatest = &out.PhysicalAddenda[j]
				}
				break
			}
		}
	}
	return nil
}

func viewAddendum(a ledger.PhysicalAddendum) PhysicalAddendum {
	v := PhysicalAddendum{At: a.At, Store: string(a.Store), Table: a.Table, Kind: a.Kind, Note: a.Note}
	var ph connector.Physical
	if json.Unmarshal(a.Physical, &ph) == nil {
		v.Physical = &ph
	}
	if !a.NextAt.IsZero() {
		next := a.NextAt
		v.NextAt = &next
	}
	if a.LogIndex >= 0 {
		index := a.LogIndex
		v.LogIndex = &index
		v.Report = a.Report
	}
	return v
}
