package config

import "time"

// MaxPhysicalWindow is the longest physical_window. The bytes a forget
// looks for are held in memory at most 24 hours after its scan (the bound
// of physical_rescan's re-scans, pgstore.RescanHeldFor), and the batch
// scans for them: the window ends 10 minutes before that bound, for the
// engine, which runs the batches then due once a minute.
const MaxPhysicalWindow = 24*time.Hour - 10*time.Minute

// minPhysicalWindow is the shortest physical_window other than 0: a
// shorter one batches next to nothing.
const minPhysicalWindow = time.Minute

// BatchWindow is how long the rule's forgets wait for the table's
// batched physical step (physical_window): 0 when the step runs inside
// each forget (unset, 0, or physical neither vacuum nor scrub).
func (t TableRule) BatchWindow() time.Duration {
	if t.PhysicalWindow == nil || !t.Physical.Vacuums() {
		return 0
	}
	return t.PhysicalWindow.D()
}

// validatePhysicalWindow checks physical_window against the rule's
// physical setting and the bound the bytes are held for.
func validatePhysicalWindow(at func(string, ...any) error, t TableRule) []error {
	if t.PhysicalWindow == nil {
		return nil
	}
	switch d := t.PhysicalWindow.D(); {
	case !t.Physical.Vacuums():
		return []error{at("physical_window is set but physical is %q: only vacuum and scrub have a step to batch; "+
			"remove it or write physical: vacuum or scrub", t.physicalName())}
	case d == 0:
	case d < minPhysicalWindow:
		return []error{at("physical_window %s is shorter than %s: write at least %s, or 0 to run the step inside each forget",
			d, minPhysicalWindow, minPhysicalWindow)}
	case d > MaxPhysicalWindow:
		return []error{at("physical_window %s is longer than %s: the bytes a forget looks for are held in memory at most "+
			"24h0m0s after its scan (the bound of physical_rescan's re-scans) and the batch scans for them; "+
			"write at most %s, or 0 to run the step inside each forget", d, MaxPhysicalWindow, MaxPhysicalWindow)}
	}
	return nil
}
