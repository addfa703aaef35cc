package main

import "github.com/lethe-privacy/lethe/certificate/offline"

// writeReport writes a signed report to file, by default <run id>.json
// in the current directory, and returns the file it wrote.
func writeReport(file, runID string, signed []byte) (string, error) {
	if file == "" {
		file = runID + ".json"
	}
	return file, offline.WriteFile(file, signed)
}

// reportLogIndex is where the log holds a signed report's event.
var reportLogIndex = offline.ReportLogIndex
