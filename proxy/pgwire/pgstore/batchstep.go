package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/lethe-privacy/lethe/connector"
)

// physicalSteps runs steps once on t for every fingerprint of prints (the
// forgets of one batch, or a single forget), scans t's pages for each
// one's bytes, and for scrub rebuilds once what still holds any of them
// and scans for each again. The results, one per print in order, share
// the method's account of the steps; for a batch it names how many
// forgets the steps ran for.
func (s *Store) physicalSteps(ctx context.Context, t Table, scan PhysicalScan, steps PhysicalSteps, prints []*fingerprint) []*connector.Physical {
	var log stepLog
	if steps.Vacuum || steps.Scrub {
		s.vacuumStep(ctx, t, &log)
	}
	outs := make([]*connector.Physical, len(prints))
	for i, f := range prints {
		outs[i] = s.scanPages(ctx, t, scan, f)
	}
	if held := holdingAny(outs); steps.Scrub && held != nil {
		if len(prints) == 1 {
			log = append(log, fmt.Sprintf("a first scan found the bytes in %d of %d pages scanned", held.Holding(), held.Scanned()))
		} else {
			log = append(log, fmt.Sprintf("first scans found the bytes of %d of the %d forgets", holdingCount(outs), len(outs)))
		}
		if s.scrubStep(ctx, t, held, steps.RewriteMaxPages, &log) {
			for i, f := range prints {
				outs[i] = s.scanPages(ctx, t, scan, f)
			}
		}
	}
	method := "physical: " + steps.Name()
	if len(prints) > 1 {
		method += fmt.Sprintf(" (one batch: the steps ran once for %d forgets of the table, then each forget's pages were scanned)", len(prints))
	}
	if len(log) > 0 {
		method += "; steps: " + strings.Join(log, "; ")
	}
	for _, out := range outs {
		m := method
		if out.Method != "" {
			m += "; then the scan stated here: " + out.Method
		}
		out.Method = m
	}
	return outs
}

// holdingAny is the relations of outs with, per relation, the pages that
// hold any scan's bytes (the sum over the scans: scrubStep asks only
// which relations hold some and how large they are); nil when no scan
// found any.
func holdingAny(outs []*connector.Physical) *connector.Physical {
	var merged *connector.Physical
	at := map[string]int{}
	for _, out := range outs {
		if out.Status != connector.PhysicalScanned || out.Holding() == 0 {
			continue
		}
		if merged == nil {
			merged = &connector.Physical{Status: connector.PhysicalScanned}
		}
		for _, r := range out.Relations {
			i, seen := at[r.Relation]
			if !seen {
				at[r.Relation] = len(merged.Relations)
				merged.Relations = append(merged.Relations, r)
				continue
			}
			m := &merged.Relations[i]
			m.Holding += r.Holding
			m.HoldingVector += r.HoldingVector
			m.HoldingSubject += r.HoldingSubject
		}
	}
	return merged
}

// holdingCount is how many of outs found bytes.
func holdingCount(outs []*connector.Physical) int {
	n := 0
	for _, out := range outs {
		if out.Status == connector.PhysicalScanned && out.Holding() > 0 {
			n++
		}
	}
	return n
}
