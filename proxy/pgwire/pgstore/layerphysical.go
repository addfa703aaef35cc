package pgstore

import (
	"context"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

var _ connector.PhysicalLayer = (*Layer)(nil)

// ReportPhysical makes the layer scan the table's pages after each forget
// (the table's physical: report): Delete first reads what the scan needs
// to recognise the deleted records' bytes, and Physical looks for them.
func (l *Layer) ReportPhysical(scan PhysicalScan) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.physical = &scan
	if l.prints == nil {
		l.prints = map[string]*fingerprint{}
	}
}

// RemovePhysical makes the layer run steps before its page scan (the
// table's physical: vacuum or scrub); with ReportPhysical only, it scans
// after the rule's vacuum: true, if any (physical: report).
func (l *Layer) RemovePhysical(steps PhysicalSteps) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = steps
}

// fingerprintKept is how long the bytes read for a forget are kept
// waiting for its Physical: a forget that never gets there (its layer
// stays unverified until the request fails) must not keep a person's
// bytes in memory for good.
const fingerprintKept = time.Hour

// fingerprintFor returns the fingerprint being built for subject, a new
// one if none, after dropping those untouched for fingerprintKept; nil
// when the layer does not report.
func (l *Layer) fingerprintFor(subject string, now time.Time) *fingerprint {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.physical == nil {
		return nil
	}
	for s, f := range l.prints {
		if now.Sub(f.touched) > fingerprintKept {
			delete(l.prints, s)
		}
	}
	f := l.prints[subject]
	if f == nil {
		f = newFingerprint(subject)
		l.prints[subject] = f
	}
	f.touched = now
	return f
}

// remember reads the bytes of the rows Delete is about to delete for
// subject, adding them to what an earlier attempt of the same forget read,
// and where their out-of-line values' chunks and their vector index
// entries are in a TOAST table or an index too large to scan whole
// (locateToast, locateVectorIndexes). A failure is kept for Physical to
// report: it never stops the delete.
func (l *Layer) remember(ctx context.Context, m *Match, subject string, ids []string) {
	f := l.fingerprintFor(subject, time.Now())
	if f == nil || f.err != nil {
		return
	}
	l.mu.Lock()
	scan := l.physical
	l.mu.Unlock()
	if scan == nil {
		return
	}
	f.vectorsKept = int(min(scan.TargetedPages, maxVectorsKept))
	if err := l.store.readFingerprint(ctx, *m, subject, ids, f); err != nil {
		f.err = err
		return
	}
	l.store.locateToast(ctx, m.table, *scan, f)
	l.store.locateVectorIndexes(ctx, m.table, *scan, f)
}

// maxVectorsKept bounds the deleted rows whose values are held for the
// searches of the table's vector indexes (a 1536-dimension row holds 12 kB).
const maxVectorsKept = 8192

// Physical runs the layer's physical steps, then scans the table's pages
// for the bytes of the records Delete deleted for subject since the last
// Physical, and forgets those bytes. nil when the layer does not report
// (physical: off). A forget that deleted nothing here runs no step. With
// a physical_window the steps wait for the table's batch (deferSteps).
func (l *Layer) Physical(ctx context.Context, subject string) *connector.Physical {
	l.mu.Lock()
	scan, steps, f := l.physical, l.steps, l.prints[subject]
	delete(l.prints, subject)
	l.mu.Unlock()
	if scan == nil {
		return nil
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	switch {
	case f == nil || f.records == 0:
		return &connector.Physical{Status: connector.PhysicalNothingDeleted, At: now,
			Reason: "this process deleted none of the subject's records here, so there were no bytes to look for " +
				"(a forget resumed after a restart does not scan for what the earlier run deleted)"}
	case f.err != nil:
		return &connector.Physical{Status: connector.PhysicalNotPossible, At: now, Reason: f.err.Error()}
	}
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		reason := "the table no longer exists"
		if err != nil {
			reason = err.Error()
		}
		return &connector.Physical{Status: connector.PhysicalNotPossible, At: now, Reason: reason}
	}
	if out := l.deferSteps(ctx, subject, *scan, steps, f, now); out != nil {
		return out
	}
	out := l.store.physicalStep(ctx, l.table, *scan, steps, f)
	l.keepForRescans(subject, f, out, now)
	return out
}
