package admin

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrors_EngineErrorsMapToStatusAndAdvice(t *testing.T) {
	tests := []struct {
		name          string
		err           error
		target        string
		wantStatus    int
		wantCode      string
		wantInMessage string
		wantRequestID string
	}{
		{"malformed token", engine.ErrTokenMalformed, "/v1/forget", 400, "token_malformed", "run preview again", ""},
		{"expired token", engine.ErrTokenExpired, "/v1/forget", 409, "token_expired", "run preview again", ""},
		{"token of another subject", engine.ErrTokenSubject, "/v1/forget", 409, "token_subject", "run preview again", ""},
		{"stale token", engine.ErrTokenStale, "/v1/forget", 409, "token_stale", "run preview again", ""},
		{"used token names the request", &engine.UsedTokenError{RequestID: "req-1"}, "/v1/forget", 409, "token_used", "already used", "req-1"},
		{"used token, wrapped", fmt.Errorf("retry: %w", &engine.UsedTokenError{RequestID: "req-2"}), "/v1/forget", 409, "token_used", "already used", "req-2"},
		{"in progress", engine.ErrInProgress, "/v1/forget", 409, "in_progress", "already in progress", ""},
		{"unknown request", ledger.ErrNotFound, "/v1/forget/" + testID, 404, "not_found", "request_id", ""},
		{"no certificate yet", fmt.Errorf("%w: status received", engine.ErrNotCompleted), "/v1/forget/" + testID + "/certificate", 409, "not_completed", "not completed", ""},
		{"ledger down", fmt.Errorf("sqlite: %w: disk I/O error", ledger.ErrUnavailable), "/v1/forget/preview", 503, "unavailable", "retry later", ""},
		{"anything else", errors.New("pgvector: connection reset"), "/v1/log/checkpoint", 500, "internal", "server log", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := cannedEngine()
			eng.err = tt.err
			h := newHarness(t, eng)
			method, body := "POST", `{"subject":"alice@example.com","confirm_token":"tok"}`
			if tt.target != "/v1/forget" {
				body = `{"subject":"alice@example.com"}`
			}
			if tt.target != "/v1/forget" && tt.target != "/v1/forget/preview" {
				method, body = "GET", ""
			}
			w := h.do(method, tt.target, operatorToken, body)
			require.Equal(t, tt.wantStatus, w.Code, "body: %s", w.Body)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			b := errorBody(t, w)
			assert.Equal(t, tt.wantCode, b.Code)
			assert.Contains(t, b.Error, tt.wantInMessage)
			assert.Equal(t, tt.wantRequestID, b.RequestID)
			assert.NotContains(t, b.Error, tt.err.Error(), "internal error text stays in the server log")
			if tt.wantStatus == http.StatusServiceUnavailable {
				assert.NotEmpty(t, w.Header().Get("Retry-After"))
			}
		})
	}
}

// A forget whose preview found nothing, confirmed without nothing_found,
// is refused with the near misses counted and the flag named; the
// subject is not in the answer.
func TestErrors_NothingFoundNamesTheFlagAndTheNearMisses(t *testing.T) {
	eng := cannedEngine()
	eng.err = &engine.NothingFoundError{NearMisses: engine.NearMisses{LedgerRecords: 2, Records: 3}}
	h := newHarness(t, eng)
	w := h.do("POST", "/v1/forget", operatorToken, `{"subject":"Bob@Example.com","confirm_token":"tok"}`)
	require.Equal(t, http.StatusConflict, w.Code, "body: %s", w.Body)
	b := errorBody(t, w)
	assert.Equal(t, "nothing_found", b.Code)
	assert.Equal(t, &engine.NearMisses{LedgerRecords: 2, Records: 3}, b.NearMisses)
	assert.Contains(t, b.Error, "no records of this subject were found in any layer")
	assert.Contains(t, b.Error, "2 ledger records and 3 store records")
	assert.Contains(t, b.Error, "nothing_found")
	assert.NotContains(t, w.Body.String(), "Bob@Example.com")

	eng.err = engine.ErrRecordsFound
	w = h.do("POST", "/v1/forget", operatorToken, `{"subject":"Bob@Example.com","confirm_token":"tok","nothing_found":true}`)
	require.Equal(t, http.StatusConflict, w.Code, "body: %s", w.Body)
	b = errorBody(t, w)
	assert.Equal(t, "records_found", b.Code)
	assert.Contains(t, b.Error, "confirm without nothing_found")
}

func TestErrors_InternalErrorsAreLogged(t *testing.T) {
	eng := cannedEngine()
	eng.err = errors.New("pgvector: connection reset")
	h := newHarness(t, eng)
	h.do("GET", "/v1/forget/"+testID, operatorToken, "")
	assert.Contains(t, h.logs.String(), "pgvector: connection reset")
	assert.Contains(t, h.logs.String(), `"route":"/v1/forget/{id}"`)
}
