package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/engine/enginetest"
)

// TestForgetRun_OneStepToAVerifiedCertificateExitsZeroOnlyIfValid runs forget run and forget
// status --wait against a real admin API over an engine with no layer,
// where every subject is found nowhere and a certificate proves no
// erasure: incomplete, so forget run exits 1 though the forget completed.
// (adminclient's tests run it to a valid certificate.)
func TestForgetRun_OneStepToAVerifiedCertificateExitsZeroOnlyIfValid(t *testing.T) {
	rig := enginetest.New(t, time.Hour)
	secret, entry, err := admin.NewToken("cli5-ops", admin.RoleOperator)
	require.NoError(t, err)
	api, err := admin.New(admin.Config{Engine: rig.Engine, Tokens: []admin.Token{entry}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	dir := t.TempDir()
	tokenFile, keysFile, certFile := filepath.Join(dir, "token"), filepath.Join(dir, "keys.json"), filepath.Join(dir, "cert.json")
	require.NoError(t, os.WriteFile(tokenFile, []byte(secret), 0o600))
	keys, err := json.Marshal(rig.Keys)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keysFile, keys, 0o644))
	client := []string{"--admin", srv.URL, "--token-file", tokenFile}

	var stdout, stderr bytes.Buffer
	code := run(append([]string{"forget", "run", "--yes"}, client...), strings.NewReader("erin@example.com\n"), &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "WARNING: ")
	assert.Contains(t, stderr.String(), "pass --nothing-found with --yes")

	stdout.Reset()
	stderr.Reset()
	code = run(append([]string{"forget", "run", "--yes", "--nothing-found", "--keys", keysFile, "--out", certFile}, client...),
		strings.NewReader("erin@example.com\n"), &stdout, &stderr)
	require.Equal(t, 1, code, stdout.String()+stderr.String())
	assert.Contains(t, stdout.String(), "verdict: incomplete\n")
	assert.Contains(t, stderr.String(), "the certificate is NOT valid")
	assert.FileExists(t, certFile)
	assert.NotContains(t, stdout.String()+stderr.String(), "erin@", "the subject is never printed")
	id := regexp.MustCompile(`request_id: (\w+)`).FindStringSubmatch(stdout.String())
	require.Len(t, id, 2, stdout.String())

	stdout.Reset()
	code = run(append([]string{"forget", "status", id[1], "--wait"}, client...), nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), `"status": "completed"`)

	stderr.Reset()
	code = run(append([]string{"forget", "run", "--nothing-found"}, client...), strings.NewReader("erin@example.com\n"), &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "--nothing-found goes with --yes")
}

// TestForgetCmd_FindsTheAdminAPIInTheConfig: without --admin and
// LETHE_ADMIN_URL, --config's forget.admin.listen names the admin API.
func TestForgetCmd_FindsTheAdminAPIInTheConfig(t *testing.T) {
	reached := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.URL.Path
		w.Write([]byte(`{"request_id":"` + cliRequestID + `","status":"completed"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("cli5-token"), 0o600))
	config := writeConfig(t, dir, exportConfig+"forget:\n  signing_key: key.pem\n  admin:\n    tokens_file: tokens.json\n    listen: "+
		strings.TrimPrefix(srv.URL, "http://")+"\n")
	t.Setenv("LETHE_ADMIN_URL", "")

	var stdout, stderr bytes.Buffer
	code := run([]string{"forget", "status", cliRequestID, "--config", config, "--token-file", tokenFile}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "/v1/forget/"+cliRequestID, <-reached)
}
