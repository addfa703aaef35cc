package datamap

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatOf_TheExtensionNamesTheRendering(t *testing.T) {
	for file, want := range map[string]Format{"map.md": FormatMarkdown, "MAP.MARKDOWN": FormatMarkdown, "docs/map.json": FormatJSON} {
		got, ok := FormatOf(file)
		assert.True(t, ok, file)
		assert.Equal(t, want, got, file)
	}
	_, ok := FormatOf("map.txt")
	assert.False(t, ok)
}

func TestCheck_SameIsNilDifferentSaysHowToRegenerate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "map.json")
	require.NoError(t, os.WriteFile(file, []byte("{\"a\": 1}\n"), 0o600))

	stale, err := Check(file, "lethe.yaml", FormatJSON, []byte("{\"a\": 1}\n"))
	require.NoError(t, err)
	assert.Nil(t, stale)

	stale, err = Check(file, "lethe.yaml", FormatJSON, []byte("{\"a\": 2}\n"))
	require.NoError(t, err)
	require.NotNil(t, stale)
	assert.Contains(t, stale.Diff, "-{\"a\": 1}")
	assert.Contains(t, stale.Diff, "+{\"a\": 2}")
	assert.Equal(t, "lethe-proxy export --config lethe.yaml --format json --out "+file, stale.Regenerate)

	_, err = Check(filepath.Join(dir, "absent.md"), "lethe.yaml", FormatMarkdown, nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
