package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bearer adds a token to every request of an HTTP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (r apiRig) httpMCP(t *testing.T) string {
	t.Helper()
	h, err := NewHTTPHandler(r.Config, r.URL)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func httpSession(t *testing.T, endpoint, token string) (*mcp.ClientSession, error) {
	transport := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(context.Background(), transport, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTP_EachTokenGetsItsRolesToolsOnEveryReplica(t *testing.T) {
	r := newAPIRig(t)
	replicaA, replicaB := r.httpMCP(t), r.httpMCP(t)

	auditor, err := httpSession(t, replicaA, r.Auditor)
	require.NoError(t, err)
	assert.Equal(t, []string{"certificate", "coverage", "status", "verify"}, toolNames(t, auditor))
	_, err = auditor.CallTool(context.Background(), &mcp.CallToolParams{Name: "forget", Arguments: map[string]any{"subject_ref": "x", "confirm_token": "x"}})
	require.Error(t, err, "an auditor's token cannot call forget")
	assert.Contains(t, err.Error(), "unknown tool")

	// Preview on one replica, forget on another: stateless, and the
	// reference opens on any replica with the same key.
	opA, err := httpSession(t, replicaA, r.OperatorToken)
	require.NoError(t, err)
	assert.Equal(t, []string{"certificate", "coverage", "forget", "preview", "reverify", "status", "verify"}, toolNames(t, opA))
	var pv PreviewResult
	call(t, opA, "preview", map[string]any{"subject": alice}, &pv)
	opB, err := httpSession(t, replicaB, r.OperatorToken)
	require.NoError(t, err)
	var receipt ForgetResult
	call(t, opB, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": pv.Token}, &receipt)
	require.NotEmpty(t, receipt.RequestID)
	r.Engine.Wait()
	var v VerifyResult
	call(t, auditor, "verify", map[string]any{"request_id": receipt.RequestID}, &v)
	assert.True(t, v.Valid, v.Report)
	assert.Contains(t, r.Log.String(), "tool=forget caller=agent-ops")
	assert.Contains(t, r.Log.String(), "tool=verify caller=agent-audit")
}

func TestHTTP_MissingOrUnknownTokenIsUnauthorized(t *testing.T) {
	r := newAPIRig(t)
	endpoint := r.httpMCP(t)
	for name, header := range map[string]string{"none": "", "unknown": "Bearer not-a-token", "basic": "Basic abc"} {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
	}
	_, err := httpSession(t, endpoint, "not-a-token")
	require.Error(t, err, "the SDK client is refused too")
}
