package reconcile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The report is written as signed, by default as RUN_ID.json in the
// current directory, and Outcome.Report names it by its absolute path.
func TestOutcome_WriteReportRecordsItsAbsolutePath(t *testing.T) {
	t.Chdir(t.TempDir())
	o := Outcome{RunID: "reconcile-1"}
	require.NoError(t, o.WriteReport("", []byte(`{"signed":1}`)))
	want, err := filepath.Abs("reconcile-1.json")
	require.NoError(t, err)
	assert.Equal(t, want, o.Report)
	got, err := os.ReadFile(want)
	require.NoError(t, err)
	assert.Equal(t, `{"signed":1}`, string(got))

	err = o.WriteReport(filepath.Join("missing", "dir", "r.json"), []byte(`{}`))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "the records were adopted, but their report was not: writing the report (its event is in the log as run reconcile-1): "), err.Error())
}
