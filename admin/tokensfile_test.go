package admin

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestTokensFile_ATokenAddedIsAcceptedAndOneRemovedRefusedWithoutARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	first, firstEntry, err := NewToken("cli5-first", RoleOperator)
	require.NoError(t, err)
	require.NoError(t, AppendToken(path, firstEntry))
	tokens, err := LoadTokens(path)
	require.NoError(t, err)
	logs := &lockedBuffer{}
	api, err := New(Config{Engine: &fakeEngine{}, Tokens: tokens, TokensFile: path, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	status := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/whoami", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	second, secondEntry, err := NewToken("cli5-second", RoleAuditor)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status(first))
	assert.Equal(t, http.StatusUnauthorized, status(second))

	require.NoError(t, AppendToken(path, secondEntry))
	assert.Equal(t, http.StatusOK, status(second), "added while the server runs")
	assert.Equal(t, http.StatusOK, status(first))

	only, err := os.ReadFile(path)
	require.NoError(t, err)
	tokens, err = ParseTokens(only)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(`{"tokens":[`+mustJSON(t, tokens[1])+`]}`), 0o600))
	assert.Equal(t, http.StatusUnauthorized, status(first), "removed while the server runs")
	assert.Equal(t, http.StatusOK, status(second))

	// Half-written by an editor: the tokens read last stay in force, and
	// the problem is logged once.
	require.NoError(t, os.WriteFile(path, []byte(`{"tokens":[`), 0o600))
	assert.Equal(t, http.StatusOK, status(second))
	assert.Equal(t, http.StatusOK, status(second))
	assert.Equal(t, http.StatusUnauthorized, status(first))
	assert.Equal(t, 1, strings.Count(logs.String(), "the tokens file cannot be used"), logs.String())
	assert.NotContains(t, logs.String(), second)
}

func TestAppendToken_CreatesTheFilePrivateAndRefusesADuplicate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	_, entry, err := NewToken("cli5-ops", RoleOperator)
	require.NoError(t, err)
	require.NoError(t, AppendToken(path, entry))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	_, again, err := NewToken("cli5-ops", RoleAuditor)
	require.NoError(t, err)
	require.ErrorContains(t, AppendToken(path, again), `token name "cli5-ops" is used twice`)
	tokens, err := LoadTokens(path)
	require.NoError(t, err)
	assert.Equal(t, []Token{entry}, tokens, "the file is left as it was")

	require.NoError(t, os.Chmod(path, 0o640))
	_, other, err := NewToken("cli5-audit", RoleAuditor)
	require.NoError(t, err)
	require.NoError(t, AppendToken(path, other))
	info, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the file keeps its mode")

	require.NoError(t, os.WriteFile(path, []byte("not json"), 0o600))
	require.ErrorContains(t, AppendToken(path, entry), "fix the file, then add the token again")
}

func mustJSON(t *testing.T, tok Token) string {
	t.Helper()
	return `{"name":"` + tok.Name + `","role":"` + string(tok.Role) + `","sha256":"` + tok.SHA256 + `"}`
}
