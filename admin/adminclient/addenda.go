package adminclient

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lethe-privacy/lethe/certificate/offline"
	"github.com/lethe-privacy/lethe/engine"
)

// WriteAddenda writes each signed report among the physical addenda of a
// forget's status (the admin API's answer to status; the re-scans and
// the batch's scan, each a logged forget.physical report) to dir as
// addendum-<log index>.json, the files `lethe-proxy verify --addendum`
// folds into the certificate's verdict, and returns them, oldest first.
// The certified entry has no report of its own (the certificate states
// it) and is skipped. dir is created if missing.
func WriteAddenda(status []byte, dir string) ([]string, error) {
	var st engine.Status
	if err := json.Unmarshal(status, &st); err != nil {
		return nil, fmt.Errorf("the admin API's status is not JSON: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, a := range st.PhysicalAddenda {
		if a.LogIndex == nil || len(a.Report) == 0 {
			continue
		}
		file := filepath.Join(dir, fmt.Sprintf("addendum-%d.json", *a.LogIndex))
		// The signature covers the payload's bytes, which travel in
		// base64: the envelope's spacing is free.
		if err := offline.WriteFile(file, append(append([]byte{}, a.Report...), '\n')); err != nil {
			return files, fmt.Errorf("writing the addendum at log index %d: %w", *a.LogIndex, err)
		}
		files = append(files, file)
	}
	return files, nil
}
