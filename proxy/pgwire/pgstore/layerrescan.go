package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

// RescanHeldFor bounds how long a layer keeps the bytes a scan that found
// residue looked for, so that later re-scans can look for them again: a
// day after that scan, whatever the request's deadline. The bytes are a
// person's data held in memory only (never stored or logged), so they are
// also gone when the process ends.
const RescanHeldFor = 24 * time.Hour

// ErrBytesNotHeld is returned by Rescan when the layer no longer holds the
// bytes to look for.
var ErrBytesNotHeld = errors.New("not possible: the bytes to look for were held in memory only, " +
	"and this process no longer holds them")

// keptPrint is a fingerprint kept for re-scans until until.
type keptPrint struct {
	print *fingerprint
	until time.Time
}

// RescanPhysical makes the layer keep the bytes a scan looked for when it
// found residue, for re-scans every every (the table's physical_rescan);
// 0 keeps nothing.
func (l *Layer) RescanPhysical(every time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rescanEvery = every
}

// RescanEvery is how often the layer wants a scan that found residue
// repeated; 0 for never.
func (l *Layer) RescanEvery() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rescanEvery
}

// keepForRescans keeps f for subject when out found residue and the layer
// re-scans, and says so in out's method.
func (l *Layer) keepForRescans(subject string, f *fingerprint, out *connector.Physical, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rescanEvery <= 0 || out.Status != connector.PhysicalScanned || out.Holding() == 0 {
		return
	}
	if l.kept == nil {
		l.kept = map[string]keptPrint{}
	}
	l.kept[subject] = keptPrint{print: f, until: now.Add(RescanHeldFor)}
	out.Method += fmt.Sprintf("; residue: re-scanned every %s (physical_rescan) until clean, the request's deadline, or %s after this scan "+
		"(the bytes looked for are held in memory only, never stored; a restart ends the re-scans), each result logged as a forget.physical report",
		l.rescanEvery, RescanHeldFor)
}

// Rescan runs the layer's physical steps again (vacuum and scrub; report
// only scans) and scans the pages for the bytes kept for subject by an
// earlier Physical that found residue. A clean scan drops the bytes. It
// fails with ErrBytesNotHeld when none are kept (a restart, Release, or
// RescanHeldFor passed).
func (l *Layer) Rescan(ctx context.Context, subject string) (*connector.Physical, error) {
	now := time.Now()
	l.mu.Lock()
	k, ok := l.kept[subject]
	if ok && now.After(k.until) {
		delete(l.kept, subject)
		ok = false
	}
	scan, steps := l.physical, l.steps
	l.mu.Unlock()
	if !ok || scan == nil {
		return nil, ErrBytesNotHeld
	}
	out := l.store.physicalStep(ctx, l.table, *scan, steps, k.print)
	if out.Status == connector.PhysicalScanned && out.Holding() == 0 {
		l.Release(subject)
	}
	return out, nil
}

// Release drops the bytes kept for subject's re-scans.
func (l *Layer) Release(subject string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.kept, subject)
}
