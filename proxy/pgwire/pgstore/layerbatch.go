package pgstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

// MaxPhysicalWindow is the longest window BatchPhysical takes: a batch
// scans for bytes held at most RescanHeldFor after the forget's scan, and
// the engine runs the batches due once a minute, so the window ends 10
// minutes before that bound (config.MaxPhysicalWindow is the same).
const MaxPhysicalWindow = RescanHeldFor - 10*time.Minute

// BatchPhysical makes the layer's vacuum and scrub steps wait for a batch
// (the table's physical_window): each forget scans the pages right after
// its delete and keeps the bytes it looked for, and RescanBatch later runs
// the steps once for every forget deferred to it. 0 runs the steps inside
// each forget; a window over MaxPhysicalWindow is cut to it. It changes
// nothing for physical: report, which has no step.
func (l *Layer) BatchPhysical(window time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.window = min(max(window, 0), MaxPhysicalWindow)
}

// PhysicalWindow is how long the layer's forgets wait for its batched
// steps; 0 when they run inside each forget (no window, or no step).
func (l *Layer) PhysicalWindow() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.physical == nil || !(l.steps.Vacuum || l.steps.Scrub) {
		return 0
	}
	return l.window
}

// deferSteps is Physical for a layer whose steps wait for a batch: it
// scans the pages right after the delete, before any step, and when they
// hold the bytes keeps those for the batch (held as for re-scans, at most
// RescanHeldFor) and says in the method that the steps are deferred. nil
// when the layer runs its steps in each forget, or when the scan was not
// possible: then the steps run at once, as without a window, since a
// batch could not tell what they removed.
func (l *Layer) deferSteps(ctx context.Context, subject string, scan PhysicalScan, steps PhysicalSteps, f *fingerprint, now time.Time) *connector.Physical {
	window := l.PhysicalWindow()
	if window <= 0 {
		return nil
	}
	out := l.store.scanPages(ctx, l.table, scan, f)
	if out.Status != connector.PhysicalScanned {
		return nil
	}
	method := "physical: " + steps.Name()
	if out.Holding() == 0 {
		out.Method = method + "; no step ran: the scan right after the delete found none of the bytes (physical_window " +
			window.String() + "); the scan stated here: " + out.Method
		return out
	}
	l.mu.Lock()
	if l.kept == nil {
		l.kept = map[string]keptPrint{}
	}
	l.kept[subject] = keptPrint{print: f, until: now.Add(RescanHeldFor)}
	every := l.rescanEvery
	l.mu.Unlock()
	out.Method = fmt.Sprintf("%s; steps deferred to the table's batch (physical_window %s): they run once for every forget "+
		"of the table in the window, then each forget's pages are scanned again and the result logged as a forget.physical report", method, window)
	if every > 0 {
		out.Method += fmt.Sprintf("; residue after the batch is re-scanned every %s (physical_rescan)", every)
	}
	out.Method += fmt.Sprintf(" until clean, the request's deadline, or %s after this scan (the bytes looked for are held in memory only, "+
		"never stored; a restart loses the batch and its re-scans); the scan stated here ran right after the delete, before any step: %s",
		RescanHeldFor, out.Method)
	return out
}

// RescanBatch runs the layer's physical steps once for all of subjects
// (the forgets deferred to one batch: one VACUUM, one scrub), then scans
// the pages for each subject's bytes, and calls each with the result, or
// with ErrBytesNotHeld for a subject whose bytes it no longer holds (a
// restart, Release, or RescanHeldFor passed). A clean result drops that
// subject's bytes. No step runs when no subject's bytes are held.
func (l *Layer) RescanBatch(ctx context.Context, subjects []string, each func(subject string, ph *connector.Physical, err error)) {
	now := time.Now()
	var held []string
	var prints []*fingerprint
	l.mu.Lock()
	scan, steps := l.physical, l.steps
	for _, subject := range subjects {
		k, ok := l.kept[subject]
		if ok && now.After(k.until) {
			delete(l.kept, subject)
			ok = false
		}
		if ok && scan != nil {
			held = append(held, subject)
			prints = append(prints, k.print)
		}
	}
	l.mu.Unlock()
	for _, subject := range subjects {
		if !slices.Contains(held, subject) {
			each(subject, nil, ErrBytesNotHeld)
		}
	}
	if len(held) == 0 {
		return
	}
	outs := l.store.physicalSteps(ctx, l.table, *scan, steps, prints)
	for i, subject := range held {
		if outs[i].Status == connector.PhysicalScanned && outs[i].Holding() == 0 {
			l.Release(subject)
		}
		each(subject, outs[i], nil)
	}
}
