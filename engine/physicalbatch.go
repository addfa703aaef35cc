package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

// physicalBatcher is a layer whose physical steps (vacuum, scrub) wait
// for a batch run once per window for every forget of its table in the
// window (pgstore.Layer with physical_window): its Physical scans right
// after the delete and keeps the bytes it looked for, and the forget is
// certified with that scan at once. The batch's results are logged as
// forget.physical reports, one per forget, like re-scans.
type physicalBatcher interface {
	physicalRescanner
	// PhysicalWindow is how long a forget waits for the batch; 0 when
	// the steps run inside each forget.
	PhysicalWindow() time.Duration
	// RescanBatch runs the steps once for all of subjects, then scans for
	// each subject's bytes and calls each with the result, or an error
	// when the layer no longer holds that subject's bytes.
	RescanBatch(ctx context.Context, subjects []string, each func(subject string, ph *connector.Physical, err error))
}

// batchKey names one layer's batches.
type batchKey struct{ store, table string }

// dueRescan is one due re-scan of RescanDue.
type dueRescan struct {
	key   rescanKey
	entry *rescanEntry
}

// joinBatch is when the batch that runs l's deferred steps for a forget
// whose page scan found ph is due: the layer's open batch, or a new one
// due a window from now; the scan's method then names it. Zero when l
// ran its steps in the forget (no window, or the scan found no bytes or
// could not run: the layer defers only then).
func (e *Engine) joinBatch(l connector.Layer, ph *connector.Physical) time.Time {
	b, ok := l.(physicalBatcher)
	if !ok || ph == nil || ph.Status != connector.PhysicalScanned || ph.Holding() == 0 {
		return time.Time{}
	}
	window := b.PhysicalWindow()
	if window <= 0 {
		return time.Time{}
	}
	now := e.cfg.Now()
	key := batchKey{string(l.Store()), l.Name()}
	e.rescanMu.Lock()
	due, open := e.batches[key]
	if !open || !now.Before(due) {
		due = now.Add(window)
		if e.batches == nil {
			e.batches = map[batchKey]time.Time{}
		}
		e.batches[key] = due
	}
	e.rescanMu.Unlock()
	ph.Method += "; this forget's batch is due at " + due.UTC().Format(time.RFC3339)
	return due
}

// batchedNote is the certified addendum's note for a forget whose steps
// wait for the batch due at due.
func batchedNote(ph *connector.Physical, entry *rescanEntry, due time.Time) string {
	note := fmt.Sprintf("certified with bytes in %d of %d pages scanned right after the delete; the physical steps wait for the table's batch due at %s, ",
		ph.Holding(), ph.Scanned(), due.UTC().Format(time.RFC3339))
	if entry.every > 0 {
		return note + fmt.Sprintf("then re-scanned every %s until clean or the request's deadline %s", entry.every, entry.deadline.UTC().Format(time.RFC3339))
	}
	return note + "whose scan is the last (physical_rescan 0)"
}

// runBatch runs one layer's due batch: the layer's steps once for every
// forget in batch, then one scan and one logged result per forget.
func (e *Engine) runBatch(ctx context.Context, batch []dueRescan) {
	bySubject := map[string][]dueRescan{}
	var subjects []string
	for _, d := range batch {
		if _, seen := bySubject[d.entry.subject]; !seen {
			subjects = append(subjects, d.entry.subject)
		}
		bySubject[d.entry.subject] = append(bySubject[d.entry.subject], d)
	}
	defer func() {
		for _, d := range batch {
			e.finishRescan(d.entry)
		}
	}()
	batch[0].entry.batcher.RescanBatch(ctx, subjects, func(subject string, ph *connector.Physical, err error) {
		for _, d := range bySubject[subject] {
			e.recordRescan(ctx, d.key, d.entry, ph, err, len(batch))
		}
	})
	e.log.Info("forget: physical batch ran", "store", batch[0].key.store, "table", batch[0].key.table, "forgets", len(batch))
}
