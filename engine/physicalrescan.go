package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// physicalRescanner is a layer whose page scan, when it found residue, can
// be repeated later for the same bytes while its process holds them
// (pgstore.Layer with physical_rescan).
type physicalRescanner interface {
	// RescanEvery is how often to repeat a scan that found residue; 0 for
	// never.
	RescanEvery() time.Duration
	// Rescan runs the layer's physical steps again and scans for the
	// bytes kept for subject; it fails when they are no longer held.
	Rescan(ctx context.Context, subject string) (*connector.Physical, error)
	// Release drops the bytes kept for subject.
	Release(subject string)
}

// rescanKey names one layer of one request.
type rescanKey struct{ request, store, table string }

// rescanEntry is a layer whose certified scan found residue, waiting for
// its next re-scan. The subject is held in memory only, as the layer
// holds the bytes: neither survives the process.
type rescanEntry struct {
	layer    physicalRescanner
	subject  string
	every    time.Duration
	next     time.Time
	deadline time.Time
	done     int  // re-scans run so far
	running  bool // a RescanDue is running it
	// batcher is the layer while its physical steps wait for its batch:
	// the re-scan due at next is the batch's; nil after it.
	batcher physicalBatcher
}

// scheduleRescans queues a re-scan of each layer of completed request r
// whose certified scan found residue, and records the certified state as
// the first physical addendum (so that a restart is seen: its re-scans
// are then stated lost). Failures are logged: the certificate stands.
func (e *Engine) scheduleRescans(ctx context.Context, r ledger.ForgetRequest, subject string, st *journalState) {
	now := e.cfg.Now()
	for _, ls := range st.Layers {
		ph := ls.Physical
		if ph == nil || ph.Status != connector.PhysicalScanned || ph.Holding() == 0 {
			continue
		}
		l, err := e.layer(ledger.Store(ls.Store), ls.Table)
		if err != nil {
			continue
		}
		rl, ok := l.(physicalRescanner)
		batcher, batched := l.(physicalBatcher)
		batched = batched && !ls.PhysicalBatch.IsZero()
		if !ok || (rl.RescanEvery() <= 0 && !batched) {
			continue
		}
		entry := &rescanEntry{layer: rl, subject: subject, every: rl.RescanEvery(), next: now.Add(rl.RescanEvery()), deadline: r.Deadline}
		note := fmt.Sprintf("certified with bytes in %d of %d pages scanned; re-scanned every %s until clean or the request's deadline %s",
			ph.Holding(), ph.Scanned(), entry.every, r.Deadline.UTC().Format(time.RFC3339))
		if batched {
			entry.next, entry.batcher = ls.PhysicalBatch, batcher
			note = batchedNote(ph, entry, ls.PhysicalBatch)
		}
		if err := e.addAddendum(ctx, r.ID, ls, ledger.AddendumCertified, ph, entry.next, note, -1, nil); err != nil {
			e.log.Warn("forget: could not record the residue to re-scan; no re-scan follows", "request", r.ID, "table", ls.Table, "err", err)
			rl.Release(subject)
			continue
		}
		e.rescanMu.Lock()
		if e.rescans == nil {
			e.rescans = map[rescanKey]*rescanEntry{}
		}
		e.rescans[rescanKey{r.ID, ls.Store, ls.Table}] = entry
		e.rescanMu.Unlock()
	}
}

// RescanDue runs every re-scan due now (the batches due among them, one
// per layer: physicalbatch.go), then states lost the re-scans
// another process held and can no longer run (a restart). Start calls it
// with each resume; tests call it with a clock they move.
func (e *Engine) RescanDue(ctx context.Context) {
	now := e.cfg.Now()
	e.rescanMu.Lock()
	due := map[rescanKey]*rescanEntry{}
	for k, r := range e.rescans {
		if !r.running && !now.Before(r.next) {
			r.running = true
			due[k] = r
		}
	}
	e.rescanMu.Unlock()
	batches := map[batchKey][]dueRescan{}
	for k, r := range due {
		if r.batcher != nil {
			b := batchKey{k.store, k.table}
			batches[b] = append(batches[b], dueRescan{k, r})
			continue
		}
		e.rescan(ctx, k, r)
	}
	for _, batch := range batches {
		e.runBatch(ctx, batch)
	}
	e.stateLostRescans(ctx)
}

// rescan runs one due re-scan and logs its result: clean ends the
// re-scans, as do the deadline (no later re-scan before it) and the
// bytes no longer held; otherwise the next is queued.
func (e *Engine) rescan(ctx context.Context, k rescanKey, r *rescanEntry) {
	defer e.finishRescan(r)
	ph, err := r.layer.Rescan(ctx, r.subject)
	e.recordRescan(ctx, k, r, ph, err, 0)
}

// recordRescan logs the result of one re-scan of r (ph, or err when the
// layer could not run it) and queues the next, if any. batchOf is how
// many forgets the layer's steps ran once for when the re-scan is a
// batch's, 0 when it ran its own.
func (e *Engine) recordRescan(ctx context.Context, k rescanKey, r *rescanEntry, ph *connector.Physical, err error, batchOf int) {
	ls := layerState{Store: k.store, Table: k.table}
	now := e.cfg.Now()
	r.done++
	next := now.Add(r.every)
	kind, label, note := ledger.AddendumRescan, fmt.Sprintf("re-scan %d", r.done), ""
	if batchOf > 0 {
		kind = ledger.AddendumBatch
		label = fmt.Sprintf("re-scan %d, the batch's: the table's physical steps ran once for the %d forgets deferred to it", r.done, batchOf)
	}
	switch {
	case err != nil:
		kind, next = ledger.AddendumLost, time.Time{}
		ph = &connector.Physical{Status: connector.PhysicalNotPossible, At: now.UTC().Truncate(time.Millisecond), Reason: err.Error()}
		note = fmt.Sprintf("%s: %v; no later re-scan", label, err)
	case ph.Status == connector.PhysicalScanned && ph.Holding() == 0:
		next = time.Time{}
		note = fmt.Sprintf("%s: clean in the %d pages scanned; no later re-scan", label, ph.Scanned())
	case r.every <= 0:
		next = time.Time{}
		note = label + ": "
		if ph.Status == connector.PhysicalScanned {
			note += fmt.Sprintf("bytes of the deleted records are still in %d of %d pages scanned, and stay stated so", ph.Holding(), ph.Scanned())
		} else {
			note += "not possible (" + ph.Reason + ")"
		}
		note += "; no later re-scan (physical_rescan 0)"
	case !next.Before(r.deadline):
		next = time.Time{}
		note = fmt.Sprintf("%s: the request's deadline %s comes before the next re-scan: ", label, r.deadline.UTC().Format(time.RFC3339))
		if ph.Status == connector.PhysicalScanned {
			note += fmt.Sprintf("bytes of the deleted records are still in %d of %d pages scanned, and stay stated so", ph.Holding(), ph.Scanned())
		} else {
			note += "the last re-scan was not possible (" + ph.Reason + ")"
		}
	case ph.Status == connector.PhysicalScanned:
		note = fmt.Sprintf("%s: bytes still in %d of %d pages scanned; next at %s", label, ph.Holding(), ph.Scanned(), next.UTC().Format(time.RFC3339))
	default:
		note = fmt.Sprintf("%s: not possible (%s); next at %s", label, ph.Reason, next.UTC().Format(time.RFC3339))
	}
	if next.IsZero() {
		r.layer.Release(r.subject)
	}
	report, index, err := e.logAddendum(ctx, k.request, ls, kind, ph, note)
	if err == nil {
		err = e.addAddendum(ctx, k.request, ls, kind, ph, next, note, index, report)
	}
	if err != nil {
		// The re-scan is tried again at the next tick, its result logged then.
		e.log.Warn("forget: could not log a re-scan's result; it runs again", "request", k.request, "table", k.table, "err", err)
		return
	}
	e.log.Info("forget: physical re-scan", "request", k.request, "store", k.store, "table", k.table, "kind", kind,
		"holding", ph.Holding(), "scanned", ph.Scanned(), "next", next)
	e.rescanMu.Lock()
	defer e.rescanMu.Unlock()
	r.batcher = nil // the batch ran: later re-scans run their own steps
	if next.IsZero() {
		delete(e.rescans, k)
	} else {
		r.next = next
	}
}

// finishRescan lets the next RescanDue run r again.
func (e *Engine) finishRescan(r *rescanEntry) {
	e.rescanMu.Lock()
	r.running = false
	e.rescanMu.Unlock()
}

// restartedReason is the lost addendum's reason for re-scans whose
// process ended.
const restartedReason = "not possible: the bytes to look for were held in memory only and the proxy restarted " +
	"(or the engine that held them stopped); no later re-scan"

// stateLostRescans states lost the pending re-scans no engine runs: those
// this engine's name recorded but does not hold (it restarted), and
// those another engine let pass a whole interval (it stopped).
func (e *Engine) stateLostRescans(ctx context.Context) {
	pending, err := e.cfg.Ledger.PendingPhysicalAddenda(ctx)
	if err != nil {
		e.log.Warn("forget: cannot list pending physical re-scans", "err", err)
		return
	}
	now := e.cfg.Now()
	for _, a := range pending {
		k := rescanKey{a.RequestID, string(a.Store), a.Table}
		e.rescanMu.Lock()
		_, held := e.rescans[k]
		e.rescanMu.Unlock()
		if held {
			continue
		}
		interval := a.NextAt.Sub(a.At)
		if a.Owner != e.owner && now.Before(a.NextAt.Add(interval)) {
			continue // another engine's, not yet overdue
		}
		ls := layerState{Store: k.store, Table: k.table}
		ph := &connector.Physical{Status: connector.PhysicalNotPossible, At: now.UTC().Truncate(time.Millisecond), Reason: restartedReason}
		report, index, err := e.logAddendum(ctx, a.RequestID, ls, ledger.AddendumLost, ph, restartedReason)
		if err == nil {
			err = e.addAddendum(ctx, a.RequestID, ls, ledger.AddendumLost, ph, time.Time{}, restartedReason, index, report)
		}
		if err != nil {
			e.log.Warn("forget: could not state a lost re-scan", "request", a.RequestID, "table", a.Table, "err", err)
		}
	}
}

// logAddendum signs a forget.physical report of one layer's look and
// appends its event to the log: found is the pages scanned, done those
// free of the bytes, residual those holding them; the method names each
// relation's counts and the note.
func (e *Engine) logAddendum(ctx context.Context, requestID string, ls layerState, kind string, ph *connector.Physical, note string) ([]byte, int64, error) {
	var rels []string
	for _, r := range ph.Relations {
		rels = append(rels, fmt.Sprintf("%s (%s): %d of %d pages read hold the bytes (%d pages, %s)", r.Relation, r.Kind, r.Holding, r.Scanned, r.Pages, r.Coverage))
	}
	method := kind + ": " + note
	if ph.Status != connector.PhysicalScanned {
		method += "; status " + ph.Status
	}
	if len(rels) > 0 {
		method += "; " + strings.Join(rels, "; ")
	}
	if ph.Method != "" {
		method += "; method: " + ph.Method
	}
	report := certificate.Report{Kind: certificate.EventPhysical, RunID: requestID, At: ph.At, Layers: []certificate.ReportLayer{{
		Store: ls.Store, Table: ls.Table, Found: ph.Scanned(), Done: ph.Scanned() - ph.Holding(), Residual: ph.Holding(), Method: method}}}
	signed, err := e.cfg.Certifier.LogReport(ctx, report)
	if err != nil {
		return nil, 0, err
	}
	var sr certificate.SignedReport
	if err := json.Unmarshal(signed, &sr); err != nil || sr.Log == nil {
		return nil, 0, errors.Join(errors.New("engine: reading back the signed physical report"), err)
	}
	return signed, sr.Log.Index, nil
}

func (e *Engine) addAddendum(ctx context.Context, requestID string, ls layerState, kind string, ph *connector.Physical, next time.Time, note string, index int64, report []byte) error {
	b, err := json.Marshal(ph)
	if err != nil {
		return err
	}
	return e.cfg.Ledger.AddPhysicalAddendum(ctx, ledger.PhysicalAddendum{RequestID: requestID, At: e.cfg.Now().UTC(), Store: ledger.Store(ls.Store),
		Table: ls.Table, Kind: kind, Physical: b, NextAt: next, Note: note, Owner: e.owner, LogIndex: index, Report: report})
}
