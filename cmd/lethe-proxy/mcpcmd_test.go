package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPCmd_RefSealsTheSubjectFromStdinAndOpenNeedsTheSameKeyFile(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "mcp-ref.key")
	require.NoError(t, os.WriteFile(keyFile, bytes.Repeat([]byte{1}, 32), 0o600))
	t.Setenv(envRefKeyFile, "")

	var out, errOut bytes.Buffer
	code := run([]string{"mcp", "ref", "--ref-key-file", keyFile}, strings.NewReader("alice@example.com\n"), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	ref := strings.TrimSpace(out.String())
	assert.True(t, strings.HasPrefix(ref, "lsubj_"), ref)
	assert.NotContains(t, ref, "alice")

	out.Reset()
	code = run([]string{"mcp", "open", ref, "--ref-key-file", keyFile}, nil, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Equal(t, "alice@example.com\n", out.String())

	other := filepath.Join(dir, "other.key")
	require.NoError(t, os.WriteFile(other, bytes.Repeat([]byte{2}, 32), 0o600))
	errOut.Reset()
	assert.Equal(t, 1, run([]string{"mcp", "open", "--ref-key-file", other, ref}, nil, &out, &errOut))
	assert.Contains(t, errOut.String(), "same --ref-key-file")

	errOut.Reset()
	assert.Equal(t, 2, run([]string{"mcp", "ref"}, strings.NewReader("alice@example.com\n"), &out, &errOut))
	assert.Contains(t, errOut.String(), "--ref-key-file FILE is required")
	errOut.Reset()
	assert.Equal(t, 2, run([]string{"mcp", "ref", "--ref-key-file", filepath.Join(dir, "absent")}, strings.NewReader("x\n"), &out, &errOut))
	assert.Contains(t, errOut.String(), "reading the reference key file")
}

// TestMCPCmd_AKeysFileThatCannotBeReadStopsBeforeServing: --keys is read
// with certificate.ReadKeySet, whose error names the file and the fix.
func TestMCPCmd_AKeysFileThatCannotBeReadStopsBeforeServing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envRefKeyFile, "")
	missing := filepath.Join(dir, "absent-keys.json")
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"mcp", "--keys", missing}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "lethe-proxy mcp: --keys: certificate: reading the trusted keys file: open "+missing)
	assert.Contains(t, errOut.String(), "lethe-proxy keygen prints one")

	bad := filepath.Join(dir, "bad-keys.json")
	require.NoError(t, os.WriteFile(bad, []byte("{}"), 0o600))
	errOut.Reset()
	assert.Equal(t, 2, run([]string{"mcp", "--keys", bad}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "lethe-proxy mcp: --keys: "+bad+": certificate: trusted keys")
	assert.Empty(t, out.String())
}

func TestMCPCmd_HelpExitsZero(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"mcp", "--help"}, nil, &out, &errOut))
	assert.Contains(t, out.String(), "lethe-proxy mcp ref --ref-key-file FILE")
}
