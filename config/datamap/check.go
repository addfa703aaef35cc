package datamap

import (
	"bytes"
	"fmt"
	"os"
)

// Stale is Check's finding that a committed map differs from the one the
// configuration renders: Diff shows how, Regenerate is the command that
// writes the current map over it.
type Stale struct {
	Diff       string
	Regenerate string
}

// Check compares the map committed in file with rendered, the map of the
// configuration at configPath in format f. It returns nil when they are
// the same byte for byte, a *Stale when they differ, and an error when
// file cannot be read.
func Check(file, configPath string, f Format, rendered []byte) (*Stale, error) {
	committed, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(committed, rendered) {
		return nil, nil
	}
	regenerate := "lethe-proxy export --config " + configPath
	if f == FormatJSON {
		regenerate += " --format json"
	}
	return &Stale{
		Diff:       Diff(file+" (committed)", file+" (from "+configPath+")", committed, rendered),
		Regenerate: fmt.Sprintf("%s --out %s", regenerate, file),
	}, nil
}
