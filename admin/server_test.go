package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	operatorToken = "operator-secret-token"
	auditorToken  = "auditor-secret-token"
	testSubject   = "alice@example.com"
	testID        = "0123456789abcdef0123456789abcdef"
)

func testTokens() []Token {
	return []Token{
		{Name: "ops-1", Role: RoleOperator, SHA256: HashToken(operatorToken)},
		{Name: "audit-1", Role: RoleAuditor, SHA256: HashToken(auditorToken)},
	}
}

// syncBuffer is a log sink safe for a server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is the API over a fake engine, logging at debug level into logs.
type harness struct {
	engine  *fakeEngine
	handler http.Handler
	logs    *syncBuffer
}

func newHarness(t *testing.T, eng *fakeEngine, configure ...func(*Config)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		Engine: eng,
		Tokens: testTokens(),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, f := range configure {
		f(&cfg)
	}
	h, err := New(cfg)
	require.NoError(t, err)
	return &harness{engine: eng, handler: h, logs: logs}
}

func (h *harness) do(method, target, token, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	return w
}

func errorBody(t *testing.T, w *httptest.ResponseRecorder) ErrorBody {
	t.Helper()
	var b ErrorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &b), "body: %s", w.Body)
	return b
}

func TestRoutes_AnswerWithTheEngineResult(t *testing.T) {
	eng := cannedEngine()
	tests := []struct {
		name, method, target, token, body string
		wantStatus                        int
		wantCall                          string
		wantType                          string
		wantBody                          string // a fragment of the body
	}{
		{"preview", "POST", "/v1/forget/preview", operatorToken, `{"subject":"alice@example.com"}`,
			200, "Preview alice@example.com", "application/json", `"confirm_token":"tok-123"`},
		{"forget", "POST", "/v1/forget", operatorToken, `{"subject":"alice@example.com","confirm_token":"tok-123"}`,
			202, "Forget alice@example.com tok-123", "application/json", `"request_id":"` + testID + `"`},
		{"forget confirming that nothing was found", "POST", "/v1/forget", operatorToken,
			`{"subject":"alice@example.com","confirm_token":"tok-123","nothing_found":true}`,
			202, "Forget alice@example.com tok-123 nothing_found", "application/json", `"request_id":"` + testID + `"`},
		{"status by operator", "GET", "/v1/forget/" + testID, operatorToken, "",
			200, "Status " + testID, "application/json", `"status":"completed"`},
		{"status by auditor", "GET", "/v1/forget/" + testID, auditorToken, "",
			200, "Status " + testID, "application/json", `"status":"completed"`},
		{"list by auditor", "GET", "/v1/forget", auditorToken, "",
			200, "List status= overdue=false limit=0", "application/json", `"overdue":true`},
		{"list of overdue requests by operator", "GET", "/v1/forget?overdue=true&limit=5", operatorToken, "",
			200, "List status= overdue=true limit=5", "application/json", `"request_id":"` + testID + `"`},
		{"list by status", "GET", "/v1/forget?status=failed", auditorToken, "",
			200, "List status=failed overdue=false limit=0", "application/json", `"requests":[`},
		{"certificate verbatim", "GET", "/v1/forget/" + testID + "/certificate", auditorToken, "",
			200, "Certificate " + testID, "application/json", `{"payload":"e30","signatures":[]}`},
		{"reverify", "POST", "/v1/forget/" + testID + "/reverify", operatorToken, `{"subject":"alice@example.com"}`,
			200, "Reverify " + testID + " alice@example.com", "application/json", `"absent":true`},
		{"lift", "POST", "/v1/tombstones/lift", operatorToken, `{"subject":"alice@example.com"}`,
			200, "Lift alice@example.com", "application/json", `{"lifted":true}`},
		{"verify answers 200 with an invalid verdict", "POST", "/v1/verify", auditorToken, `{"payload":"e30"}`,
			200, "Verify", "application/json", `"verdict":"invalid_signature"`},
		{"checkpoint as text", "GET", "/v1/log/checkpoint", auditorToken, "",
			200, "Checkpoint", "text/plain; charset=utf-8", "lethe.example/log\n0\n"},
		{"inclusion", "GET", "/v1/log/inclusion?index=1&size=4", auditorToken, "",
			200, "Inclusion", "application/json", `"index":1`},
		{"consistency", "GET", "/v1/log/consistency?old=2&new=4", operatorToken, "",
			200, "Consistency", "application/json", `"old_size":2`},
		{"healthz without a token", "GET", "/healthz", "", "",
			200, "", "application/json", `"status":"ok"`},
		{"readyz without a token", "GET", "/readyz", "", "",
			200, "", "application/json", `"status":"ready"`},
		{"metrics", "GET", "/metrics", auditorToken, "",
			200, "", "text/plain; version=0.0.4; charset=utf-8", "# TYPE lethe_admin_requests_total counter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng.calls = nil
			h := newHarness(t, eng)
			w := h.do(tt.method, tt.target, tt.token, tt.body)
			require.Equal(t, tt.wantStatus, w.Code, "body: %s", w.Body)
			assert.Equal(t, tt.wantType, w.Header().Get("Content-Type"))
			assert.Contains(t, w.Body.String(), tt.wantBody)
			if tt.wantCall != "" {
				assert.Equal(t, []string{tt.wantCall}, eng.Calls())
			} else {
				assert.Empty(t, eng.Calls())
			}
		})
	}
}

func TestReadyz_AnswersUnavailableWithTheReason(t *testing.T) {
	h := newHarness(t, cannedEngine(), func(c *Config) {
		c.Ready = func(context.Context) error { return errors.New("ledger: cannot reach PostgreSQL") }
	})
	w := h.do("GET", "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.JSONEq(t, `{"status":"not ready","reason":"ledger: cannot reach PostgreSQL"}`, w.Body.String())
}

func TestRoutes_UnknownRouteOrMethodAnswersJSON(t *testing.T) {
	h := newHarness(t, cannedEngine())
	tests := []struct {
		method, target string
		want           int
	}{
		{"GET", "/v1/nope", http.StatusNotFound},
		{"DELETE", "/v1/forget/" + testID, http.StatusMethodNotAllowed},
		{"GET", "/v1/tombstones/lift", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			w := h.do(tt.method, tt.target, operatorToken, "")
			require.Equal(t, tt.want, w.Code)
			assert.NotEmpty(t, errorBody(t, w).Error)
		})
	}
	assert.Empty(t, h.engine.Calls())
}

func TestLog_QueryParametersAreChecked(t *testing.T) {
	h := newHarness(t, cannedEngine())
	for _, target := range []string{
		"/v1/log/inclusion",
		"/v1/log/inclusion?index=1",
		"/v1/log/inclusion?index=-1&size=4",
		"/v1/log/inclusion?index=4&size=4",
		"/v1/log/inclusion?index=x&size=4",
		"/v1/log/consistency?old=5&new=4",
		"/v1/log/consistency?old=1",
		"/v1/log/consistency?old=1&new=1e3",
	} {
		t.Run(target, func(t *testing.T) {
			w := h.do("GET", target, auditorToken, "")
			require.Equal(t, http.StatusBadRequest, w.Code, "body: %s", w.Body)
			assert.Equal(t, "bad_request", errorBody(t, w).Code)
		})
	}
	assert.Empty(t, h.engine.Calls())
}

func TestList_QueryParametersAreChecked(t *testing.T) {
	h := newHarness(t, cannedEngine())
	for _, target := range []string{
		"/v1/forget?status=done",
		"/v1/forget?status=completed&overdue=true",
		"/v1/forget?overdue=maybe",
		"/v1/forget?limit=0",
		"/v1/forget?limit=1001",
		"/v1/forget?limit=x",
		"/v1/forget?limit=1&limit=2",
		"/v1/forget?subject=alice",
	} {
		t.Run(target, func(t *testing.T) {
			w := h.do("GET", target, auditorToken, "")
			require.Equal(t, http.StatusBadRequest, w.Code, "body: %s", w.Body)
			assert.Equal(t, "bad_request", errorBody(t, w).Code)
		})
	}
	assert.Empty(t, h.engine.Calls())
}

func TestNew_RefusesAnUnusableConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no engine", Config{Tokens: testTokens()}, "Config.Engine is nil"},
		{"no tokens", Config{Engine: cannedEngine()}, "admin-token"},
		{"bad token entry", Config{Engine: cannedEngine(), Tokens: []Token{{Name: "x", Role: "admin", SHA256: HashToken("t")}}}, `want "operator" or "auditor"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func newRequest(method, target, body string) *http.Request {
	return httptest.NewRequest(method, target, strings.NewReader(body))
}

func serve(h *harness, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	return w
}
