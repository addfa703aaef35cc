package reconcile

import (
	"fmt"
	"path/filepath"

	"github.com/lethe-privacy/lethe/certificate/offline"
)

// WriteReport writes an adoption's signed report to file (default
// RUN_ID.json, offline.WriteReport) and records where in o.Report, as an
// absolute path. Its error says that the records were adopted and their
// event logged all the same.
func (o *Outcome) WriteReport(file string, signed []byte) error {
	written, err := offline.WriteReport(file, o.RunID, signed)
	if err != nil {
		return fmt.Errorf("the records were adopted, but their report was not: writing the report (its event is in the log as run %s): %w", o.RunID, err)
	}
	o.Report = written
	if abs, err := filepath.Abs(written); err == nil {
		o.Report = abs
	}
	return nil
}
