//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/capture/coverage"
)

// mcpBearer adds an admin API token to every request of an MCP client.
type mcpBearer struct{ token string }

func (b mcpBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, tool)
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	require.False(t, res.IsError, "%s: %s", tool, text.String())
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	return res
}

func mcpToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	var names []string
	for tool, err := range cs.Tools(ctxT(t), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestMCP_AgentForgetsThroughTheBinaryOverStdioAndHTTP drives a running
// lethe-proxy with the go-sdk client: over stdio (lethe-proxy mcp started
// as the agent's subprocess, the operator's token in its environment) a
// preview, a forget by subject reference, status and an offline verify;
// over streamable HTTP (lethe-proxy mcp --http) an auditor's token is
// offered the read-only tools only and cannot call forget.
func TestMCP_AgentForgetsThroughTheBinaryOverStdioAndHTTP(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "mcp_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.mcp_docs, id: id, subjects: [user_id]}`)
	auditorSecret, auditorEntry, err := admin.NewToken("mcp-auditor", admin.RoleAuditor)
	require.NoError(t, err)
	var tokens struct {
		Tokens []admin.Token `json:"tokens"`
	}
	tokensFile := filepath.Join(f.dir, "tokens.json")
	b, err := os.ReadFile(tokensFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &tokens))
	tokens.Tokens = append(tokens.Tokens, auditorEntry)
	b, err = json.Marshal(tokens)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tokensFile, b, 0o600))
	f.start(t)

	const subject = "mcp-carol@example.com"
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err = app.Exec(ctxT(t), `INSERT INTO mcp_docs VALUES ('m1', $1, '[1,2,3]'), ('m2', $1, '[1,2,3]'), ('m3', 'mcp-dave@example.com', '[1,2,3]')`, subject)
	require.NoError(t, err)

	refKey := filepath.Join(f.dir, "mcp-ref.key")
	require.NoError(t, os.WriteFile(refKey, bytes.Repeat([]byte{9}, 32), 0o600))
	// The subject reaches the agent only as a reference an operator made.
	ref, err := f.cli(t, subject+"\n", "mcp", "ref", "--ref-key-file", refKey)
	require.NoError(t, err)
	ref = strings.TrimSpace(ref)

	var stderr lockedBuffer
	cmd := exec.Command(f.bin, "mcp", "--keys", filepath.Join(f.dir, "keys.json"), "--ref-key-file", refKey)
	cmd.Env, cmd.Stderr = f.env, &stderr
	agent, err := mcp.NewClient(&mcp.Implementation{Name: "it-agent"}, nil).Connect(ctxT(t), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, stderr.String())
	defer agent.Close()
	assert.Equal(t, []string{"certificate", "coverage", "forget", "preview", "reverify", "status", "verify"}, mcpToolNames(t, agent))

	var pv struct {
		Layers []struct {
			Rows int `json:"rows"`
		} `json:"layers"`
		Token      string `json:"confirm_token"`
		SubjectRef string `json:"subject_ref"`
	}
	mcpCall(t, agent, "preview", map[string]any{"subject_ref": ref}, &pv)
	require.Len(t, pv.Layers, 1)
	assert.Equal(t, 2, pv.Layers[0].Rows)
	var receipt struct {
		RequestID string `json:"request_id"`
	}
	mcpCall(t, agent, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": pv.Token}, &receipt)
	require.NotEmpty(t, receipt.RequestID)
	var st struct {
		Status string `json:"status"`
	}
	for deadline := time.Now().Add(time.Minute); st.Status != "completed" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mcpCall(t, agent, "status", map[string]any{"request_id": receipt.RequestID}, &st)
	}
	require.Equal(t, "completed", st.Status)
	var left int
	require.NoError(t, app.QueryRow(ctxT(t), `SELECT count(*) FROM mcp_docs WHERE user_id = $1`, subject).Scan(&left))
	assert.Zero(t, left)
	var verdict struct {
		Valid   bool   `json:"valid"`
		Verdict string `json:"verdict"`
		Report  string `json:"report"`
	}
	mcpCall(t, agent, "verify", map[string]any{"request_id": receipt.RequestID}, &verdict)
	assert.True(t, verdict.Valid, verdict.Report)
	require.NoError(t, agent.Close())
	assert.NotContains(t, stderr.String(), subject, "the stdio server's log never holds the subject")
	assert.Contains(t, stderr.String(), "tool=forget")

	// Streamable HTTP, stateless: the caller's token decides the tools.
	addr := freePort(t)
	var httpLog lockedBuffer
	server := exec.Command(f.bin, "mcp", "--http", addr, "--keys", filepath.Join(f.dir, "keys.json"), "--ref-key-file", refKey)
	server.Env, server.Stdout, server.Stderr = f.env, &httpLog, &httpLog
	require.NoError(t, server.Start())
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	for range 400 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	connectHTTP := func(token string) (*mcp.ClientSession, error) {
		transport := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: mcpBearer{token}}}
		return mcp.NewClient(&mcp.Implementation{Name: "it-agent"}, nil).Connect(ctxT(t), transport, nil)
	}
	auditor, err := connectHTTP(auditorSecret)
	require.NoError(t, err, httpLog.String())
	defer auditor.Close()
	assert.Equal(t, []string{"certificate", "coverage", "status", "verify"}, mcpToolNames(t, auditor))
	_, err = auditor.CallTool(ctxT(t), &mcp.CallToolParams{Name: "forget", Arguments: map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": pv.Token}})
	require.Error(t, err, "an auditor's token cannot call forget")
	mcpCall(t, auditor, "verify", map[string]any{"request_id": receipt.RequestID}, &verdict)
	assert.True(t, verdict.Valid, verdict.Report)
	// coverage: the proxy's catalog check of the real database, through
	// the admin API, for an auditor: the rule's table, and a table with a
	// vector column and no rule flagged.
	pgxTable(t, db, "cover_mcp_notes", "id text PRIMARY KEY, embedding vector(3)")
	var survey coverage.Survey
	mcpCall(t, auditor, "coverage", map[string]any{}, &survey)
	require.Len(t, survey.Stores, 1)
	pgStore := survey.Stores[0]
	assert.Equal(t, coverage.StorePostgres, pgStore.Store)
	assert.Empty(t, pgStore.Error)
	assert.Contains(t, pgStore.Rules, coverage.Rule{Table: "public.mcp_docs", Where: pgStore.Rules[0].Where})
	assert.True(t, slices.ContainsFunc(pgStore.Findings, func(f coverage.Finding) bool {
		return f.Code == coverage.CodeUncoveredTable && f.Table == "public.cover_mcp_notes"
	}), "public.cover_mcp_notes flagged uncovered: %+v", pgStore.Findings)
	checkpoint, err := auditor.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: "lethe://log/checkpoint"})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(checkpoint.Contents[0].Text, "lethe.test/crash-log\n"), checkpoint.Contents[0].Text)

	_, err = connectHTTP("not-a-token")
	require.Error(t, err, "an unknown token is refused")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.NotContains(t, httpLog.String(), subject)
}
