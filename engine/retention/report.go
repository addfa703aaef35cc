package retention

import (
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/certificate/offline"
)

// WriteReport writes the sweep's signed report to file (default
// RUN_ID.json, offline.WriteReport) and says on out where it is and at
// which index the transparency log holds it. Its error says that the
// sweep itself is done and logged.
func (r Result) WriteReport(file string, out io.Writer) error {
	written, err := offline.WriteReport(file, r.RunID, r.Report)
	if err != nil {
		return fmt.Errorf("writing the report (the sweep is done and logged): %w", err)
	}
	if index, ok := offline.ReportLogIndex(r.Report); ok {
		fmt.Fprintf(out, "report %s: signed, transparency log index %d (check it: lethe-proxy verify --keys KEYS.json %s)\n", written, index, written)
	}
	return nil
}
