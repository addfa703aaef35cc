package admin

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate/webverify"
)

// TestVerifyPage_ServedWithoutAToken: /verify answers the browser
// verifier to anyone, with no token (the page holds no data), as HTML
// under its content security policy.
func TestVerifyPage_ServedWithoutAToken(t *testing.T) {
	h := newHarness(t, cannedEngine())
	rec := h.do(http.MethodGet, "/verify", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	assert.Equal(t, webverify.Page, rec.Body.Bytes())
}
