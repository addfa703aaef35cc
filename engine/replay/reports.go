package replay

import (
	"fmt"
	"path/filepath"

	"github.com/lethe-privacy/lethe/certificate/offline"
)

// WriteReports writes each request's signed report to dir (the current
// directory when empty) as replay-REQUEST_ID.json and returns the files
// by request id. A dry run has no report and writes nothing. Its error
// names the request whose report was not written: its event is in the
// log all the same.
func (r Result) WriteReports(dir string) (map[string]string, error) {
	files := map[string]string{}
	for _, q := range r.Requests {
		if q.Report == nil {
			continue
		}
		file, err := offline.WriteReport(filepath.Join(dir, "replay-"+q.RequestID+".json"), "", q.Report)
		if err != nil {
			return files, fmt.Errorf("request %s was replayed and logged (index %d), but its report was not written: %w", q.RequestID, q.LogIndex, err)
		}
		files[q.RequestID] = file
	}
	return files, nil
}
