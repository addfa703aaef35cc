package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// foundMethod is how a replay finds the records that came back.
const foundMethod = "every record read and the subjects it names hashed; records naming the forgotten subject's HMAC were found"

// replayRequest replays one completed forget over every layer, then signs
// and logs its report (unless a dry run).
func replayRequest(ctx context.Context, cfg Config, requestID string, h ledger.SubjectHash, found map[layerKey]*finds) (Request, error) {
	q := Request{RequestID: requestID, LogIndex: -1}
	for _, l := range cfg.Layers {
		f := found[layerKey{l.Store(), l.Name()}]
		out := Layer{Store: l.Store(), Table: l.Name(), Method: foundMethod + "; none"}
		if f != nil {
			out.Found = f.records
			out.Method = fmt.Sprintf("%s; %d found", foundMethod, f.records)
			if !cfg.DryRun {
				var err error
				if out, err = replayLayer(ctx, cfg, l, h, f); err != nil {
					q.Layers = append(q.Layers, out)
					return q, err
				}
			}
		}
		q.Layers = append(q.Layers, out)
	}
	if cfg.DryRun {
		return q, nil
	}
	report := certificate.Report{Kind: certificate.EventReplayed, RunID: requestID, At: cfg.Now().UTC()}
	for _, l := range q.Layers {
		report.Layers = append(report.Layers, certificate.ReportLayer{
			Store: string(l.Store), Table: l.Table, Found: max(l.Found, l.Deleted), Done: l.Deleted, Residual: l.Residual, Method: l.Method,
		})
	}
	signed, err := cfg.Certifier.LogReport(ctx, report)
	if err != nil {
		return q, fmt.Errorf("the report could not be signed and logged (the deletes stand): %w", err)
	}
	q.Report = signed
	if index, ok := reportLogIndex(signed); ok {
		q.LogIndex = index
	}
	cfg.Logger.Info("replay: forget re-applied", "request", requestID, "found", q.Found(), "log_index", q.LogIndex)
	return q, nil
}

// replayLayer deletes the subject's records in one layer as forget does,
// verifies absence, cleans up, looks at the pages where the layer is
// configured to, and marks the deleted ids in the ledger.
func replayLayer(ctx context.Context, cfg Config, l connector.Layer, h ledger.SubjectHash, f *finds) (Layer, error) {
	out := Layer{Store: l.Store(), Table: l.Name(), Found: f.records}
	// The subject's text: every spelling that hashes to h is the same
	// bytes (the HMAC is of exact bytes), so there is one.
	subject := ""
	for s := range f.subjects {
		subject = s
	}
	ids, tables, err := ledgerIDs(ctx, cfg, l, h)
	if err != nil {
		return out, err
	}
	for _, id := range f.ids {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, table := range f.tables {
		if !slices.Contains(tables, table) {
			tables = append(tables, table)
		}
	}
	deleted, err := l.Delete(ctx, subject, ids, func([]string) error { return nil })
	if err != nil {
		return out, err
	}
	out.Deleted = int64(len(deleted))
	a, err := l.Residual(ctx, subject, ids)
	if err != nil {
		return out, err
	}
	out.Residual = a.Residual
	out.Method = fmt.Sprintf("%s; %d found; deleted with forget's queries; verified: %s", foundMethod, f.records, a.Method)
	if err := l.Cleanup(ctx); err != nil {
		return out, err
	}
	if pl, ok := l.(connector.PhysicalLayer); ok {
		out.Physical = pl.Physical(ctx, subject)
	}
	if len(tables) == 0 {
		tables = []string{l.Name()}
	}
	for _, table := range tables {
		if err := cfg.Ledger.MarkDeleted(ctx, l.Store(), table, deleted); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ledgerIDs is the record ids the ledger holds for subject h in layer l,
// in any state (a completed forget marked them deleted), and the ledger
// tables they are in.
func ledgerIDs(ctx context.Context, cfg Config, l connector.Layer, h ledger.SubjectHash) (ids, tables []string, err error) {
	recs, err := cfg.Ledger.BySubject(ctx, h)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: reading the ledger's records of the subject: %w", err)
	}
	for _, r := range recs {
		if k, ok := layerOf(cfg.Layers, r.Store, r.Table); !ok || k != (layerKey{l.Store(), l.Name()}) {
			continue
		}
		if !slices.Contains(tables, r.Table) {
			tables = append(tables, r.Table)
		}
		if r.RecordID != "" && !slices.Contains(ids, r.RecordID) {
			ids = append(ids, r.RecordID)
		}
	}
	return ids, tables, nil
}

// reportLogIndex is where the log holds a signed report's event.
func reportLogIndex(signed []byte) (int64, bool) {
	var sr certificate.SignedReport
	if json.Unmarshal(signed, &sr) != nil || sr.Log == nil {
		return 0, false
	}
	return sr.Log.Index, true
}
