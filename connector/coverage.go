package connector

import (
	"context"
	"fmt"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// Coverage runs every wing's coverage check in turn (lethe-proxy check:
// the tables of capture.store's database, then each index's namespaces)
// and merges their reports. A wing that cannot be read is named in the
// report's Unchecked and its error, prefixed with its name, is in failed;
// the other wings are still checked.
func (ws Wings) Coverage(ctx context.Context, p coverage.Policy) (report coverage.Report, failed []error) {
	for _, w := range ws {
		found, err := w.Coverage(ctx, p)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", w.Name(), err))
			report.Unchecked = append(report.Unchecked, w.Name())
			continue
		}
		report.TablesChecked += found.TablesChecked
		report.NamespacesChecked += found.NamespacesChecked
		report.Findings = append(report.Findings, found.Findings...)
	}
	return report, failed
}
