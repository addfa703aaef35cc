package certificate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadKeySet_ReadsTheFileOrNamesItAndTheFix(t *testing.T) {
	f := newFixture(t)
	published, err := f.keys.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "trusted-keys.json")
	bad := filepath.Join(dir, "not-keys.json")
	for path, data := range map[string][]byte{good: published, bad: []byte(`{"log_origin":"log.lethe.example/test","keys":[]}`)} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	keys, err := ReadKeySet(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := keys.Lookup(f.op.KeyID()); !ok || keys.LogOrigin() != f.keys.LogOrigin() {
		t.Errorf("ReadKeySet(%s) lost the operator's key or the log origin: %+v", good, keys)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = ReadKeySet(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v, want one wrapping fs.ErrNotExist", err)
	}
	for _, want := range []string{missing, "trusted keys file", "lethe-proxy keygen prints one"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing file: error %v, want one naming %q", err, want)
		}
	}

	_, err = ReadKeySet(bad)
	for _, want := range []string{bad + ": ", "the set is empty", "lethe-proxy keygen"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("invalid file: error %v, want one naming %q", err, want)
		}
	}
}
