package adminclient

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The certificate's bytes are kept as sent, in a file (named on stderr)
// or on stdout.
func TestWriteCertificate_ByteForByteToTheFileOrStdout(t *testing.T) {
	body := []byte("{\"payload\": 1 }\n")
	file := filepath.Join(t.TempDir(), "cert.json")
	var stdout, stderr bytes.Buffer
	require.NoError(t, WriteCertificate("fr-1", body, file, &stdout, &stderr))
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, body, got)
	assert.Empty(t, stdout.String())
	assert.Equal(t, "certificate of request fr-1 written to "+file+"\n", stderr.String())

	stderr.Reset()
	require.NoError(t, WriteCertificate("fr-1", body, "", &stdout, &stderr))
	assert.Equal(t, string(body), stdout.String())
	assert.Empty(t, stderr.String())

	assert.Error(t, WriteCertificate("fr-1", body, filepath.Join(t.TempDir(), "no", "dir.json"), &stdout, &stderr))
}
