package offline

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, never leaving a partial file: a saved
// checkpoint is what the next run trusts, a signed report what an auditor
// is handed. The file is mode 0644.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeNewFile creates path with mode 0600 and fails if it exists: O_EXCL
// makes the check and the creation one step, so no key is ever overwritten.
func writeNewFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteReport writes a signed report (of a sweep or a reconcile
// adoption) to file, by default <run id>.json in the current directory,
// and returns the file it wrote.
func WriteReport(file, runID string, signed []byte) (string, error) {
	if file == "" {
		file = runID + ".json"
	}
	return file, WriteFile(file, signed)
}
