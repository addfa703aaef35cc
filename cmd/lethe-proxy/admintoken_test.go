package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
)

func TestAdminTokenCmd_TokensFileGetsTheEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	var secrets []string
	for _, holder := range []string{"cli5-ops", "cli5-audit"} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run([]string{"admin-token", "--name", holder, "--role", "auditor", "--tokens-file", path}, nil, &out, &errOut), errOut.String())
		secrets = append(secrets, strings.TrimSpace(out.String()))
		assert.Contains(t, errOut.String(), "Added "+holder)
	}
	tokens, err := admin.LoadTokens(path)
	require.NoError(t, err)
	require.Len(t, tokens, 2)
	for i, secret := range secrets {
		assert.Equal(t, admin.HashToken(secret), tokens[i].SHA256)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secrets[0], "the file holds hashes only")

	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run([]string{"admin-token", "--name", "cli5-ops", "--role", "operator", "--tokens-file", path}, nil, &out, &errOut))
	assert.Contains(t, errOut.String(), "used twice")
	assert.Empty(t, out.String(), "no token is shown that the file does not hold")
}
