package config

import "time"

// DefaultPhysicalRescan is physical_rescan when a rule with a physical
// setting does not write it.
const DefaultPhysicalRescan = 10 * time.Minute

// minPhysicalRescan is the shortest physical_rescan: each re-scan reads the
// table's pages again (and vacuum and scrub rerun their steps).
const minPhysicalRescan = time.Minute

// RescanEvery is how often the rule's forget scans again after a scan that
// found residue: 0 when physical is off or physical_rescan is 0.
func (t TableRule) RescanEvery() time.Duration {
	switch {
	case !t.Physical.Reports():
		return 0
	case t.PhysicalRescan == nil:
		return DefaultPhysicalRescan
	}
	return t.PhysicalRescan.D()
}

// validatePhysicalRescan checks physical_rescan against the rule's
// physical setting.
func validatePhysicalRescan(at func(string, ...any) error, t TableRule) []error {
	if t.PhysicalRescan == nil {
		return nil
	}
	switch d := t.PhysicalRescan.D(); {
	case !t.Physical.Reports():
		return []error{at("physical_rescan is set but physical is %q: only a page scan is re-scanned; "+
			"remove it or write physical: report, vacuum or scrub", t.physicalName())}
	case d != 0 && d < minPhysicalRescan:
		return []error{at("physical_rescan %s is shorter than %s: each re-scan reads the table's pages again; "+
			"write at least %s, or 0 for no re-scans", d, minPhysicalRescan, minPhysicalRescan)}
	}
	return nil
}
