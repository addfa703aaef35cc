package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each signed report goes to DIR/replay-REQUEST_ID.json byte for byte; a
// request without one (a dry run) gets no file.
func TestResult_WriteReportsOneFilePerSignedRequest(t *testing.T) {
	dir := t.TempDir()
	res := Result{Requests: []Request{{RequestID: "fr-1", Report: []byte(`{"signed":1}`)}, {RequestID: "fr-2"}}}
	files, err := res.WriteReports(dir)
	require.NoError(t, err)
	want := filepath.Join(dir, "replay-fr-1.json")
	assert.Equal(t, map[string]string{"fr-1": want}, files)
	got, err := os.ReadFile(want)
	require.NoError(t, err)
	assert.Equal(t, `{"signed":1}`, string(got))
	assert.NoFileExists(t, filepath.Join(dir, "replay-fr-2.json"))
}

// A report that cannot be written names its request and says the replay
// itself is logged.
func TestResult_WriteReportsNamesTheRequestWhoseReportFailed(t *testing.T) {
	res := Result{Requests: []Request{{RequestID: "fr-9", LogIndex: 4, Report: []byte(`{}`)}}}
	_, err := res.WriteReports(filepath.Join(t.TempDir(), "missing", "dir"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "request fr-9 was replayed and logged (index 4), but its report was not written: "), err.Error())
}
