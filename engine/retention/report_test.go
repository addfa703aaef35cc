package retention

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The report is written as signed; a report without a log section gets no
// log line, and a file that cannot be written says the sweep is logged.
func TestResult_WriteReportWritesTheSignedBytes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sweep.json")
	res := Result{RunID: "sweep-1", Report: []byte(`{"not":"logged"}`)}
	var out bytes.Buffer
	require.NoError(t, res.WriteReport(file, &out))
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, `{"not":"logged"}`, string(got))
	assert.Empty(t, out.String())

	err = res.WriteReport(filepath.Join(t.TempDir(), "missing", "sweep.json"), &out)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "writing the report (the sweep is done and logged): "), err.Error())
}
