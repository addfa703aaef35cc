package emulator_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type restResponse struct {
	status int
	header http.Header
	body   string
}

// restJSON sends one REST request over HTTP/1.1 and returns the reply.
func restJSON(t *testing.T, base, method, path, apiKey string, body io.Reader) restResponse {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(t, err)
	if apiKey != "" {
		req.Header.Set("Api-Key", apiKey)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return restResponse{status: resp.StatusCode, header: resp.Header, body: strings.TrimSpace(string(b))}
}
