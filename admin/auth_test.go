package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuth_MissingOrUnknownTokenIsUnauthorized(t *testing.T) {
	h := newHarness(t, cannedEngine())
	headers := map[string]string{
		"no header":        "",
		"unknown token":    "Bearer not-a-configured-token",
		"basic scheme":     "Basic " + operatorToken,
		"empty bearer":     "Bearer ",
		"hash, not token":  "Bearer " + HashToken(operatorToken),
		"token, no scheme": operatorToken,
	}
	s, _ := newServer(Config{Engine: cannedEngine(), Tokens: testTokens()})
	for _, rt := range s.routes() {
		if rt.roles == nil {
			continue
		}
		for name, header := range headers {
			t.Run(rt.method+" "+rt.pattern+"/"+name, func(t *testing.T) {
				target := strings.ReplaceAll(rt.pattern, "{id}", testID)
				req := newRequest(rt.method, target, `{"subject":"alice@example.com"}`)
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				w := serve(h, req)
				require.Equal(t, http.StatusUnauthorized, w.Code)
				assert.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"))
				assert.Equal(t, "unauthorized", errorBody(t, w).Code)
			})
		}
	}
	assert.Empty(t, h.engine.Calls(), "the engine must not be reached without a valid token")
}

func TestAuth_AuditorCannotPreviewForgetReverifyOrLift(t *testing.T) {
	h := newHarness(t, cannedEngine())
	for _, target := range []string{"/v1/forget/preview", "/v1/forget", "/v1/forget/" + testID + "/reverify", "/v1/tombstones/lift"} {
		t.Run(target, func(t *testing.T) {
			w := h.do("POST", target, auditorToken, `{"subject":"alice@example.com","confirm_token":"tok"}`)
			require.Equal(t, http.StatusForbidden, w.Code)
			b := errorBody(t, w)
			assert.Equal(t, "forbidden", b.Code)
			assert.Contains(t, b.Error, "needs role operator")
		})
	}
	assert.Empty(t, h.engine.Calls())
}

func TestAuth_LogsTheTokenName(t *testing.T) {
	h := newHarness(t, cannedEngine())
	h.do("GET", "/v1/forget/"+testID, auditorToken, "")
	assert.Contains(t, h.logs.String(), `"token":"audit-1"`)
	assert.NotContains(t, h.logs.String(), auditorToken)
}

func TestParseTokens(t *testing.T) {
	hash := HashToken("t1")
	tests := []struct {
		name, file string
		wantErr    string // empty: valid
	}{
		{"valid", `{"tokens":[{"name":"ops-1","role":"operator","sha256":"` + hash + `"},{"name":"audit","role":"auditor","sha256":"` + HashToken("t2") + `"}]}`, ""},
		{"uppercase hex", `{"tokens":[{"name":"ops-1","role":"operator","sha256":"` + strings.ToUpper(hash) + `"}]}`, ""},
		{"empty list", `{"tokens":[]}`, "no API tokens"},
		{"unknown field", `{"tokens":[{"name":"a","role":"operator","sha256":"` + hash + `","token":"t1"}]}`, "unknown field"},
		{"no name", `{"tokens":[{"role":"operator","sha256":"` + hash + `"}]}`, "has no name"},
		{"unknown role", `{"tokens":[{"name":"a","role":"root","sha256":"` + hash + `"}]}`, `role "root"`},
		{"short hash", `{"tokens":[{"name":"a","role":"operator","sha256":"abcd"}]}`, "64 hex digits"},
		{"duplicate name", `{"tokens":[{"name":"a","role":"operator","sha256":"` + hash + `"},{"name":"a","role":"auditor","sha256":"` + HashToken("t2") + `"}]}`, "used twice"},
		{"duplicate hash", `{"tokens":[{"name":"a","role":"operator","sha256":"` + hash + `"},{"name":"b","role":"auditor","sha256":"` + hash + `"}]}`, "same sha256"},
		{"not JSON", `tokens: []`, "want {"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTokens([]byte(tt.file))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestNewToken_EntryHoldsOnlyTheHash(t *testing.T) {
	secret, entry, err := NewToken("ops-2", RoleOperator)
	require.NoError(t, err)
	assert.Len(t, secret, 43, "32 bytes, base64url without padding")
	assert.Equal(t, HashToken(secret), entry.SHA256)
	assert.NotContains(t, entry.SHA256, secret)

	h := newHarness(t, cannedEngine(), func(c *Config) { c.Tokens = append(c.Tokens, entry) })
	assert.Equal(t, http.StatusOK, h.do("GET", "/v1/log/checkpoint", secret, "").Code)

	_, _, err = NewToken("", RoleAuditor)
	assert.Error(t, err)
	_, _, err = NewToken("x", "admin")
	assert.Error(t, err)
}
