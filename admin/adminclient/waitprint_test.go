package adminclient

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ended forget's status is printed as JSON on stdout; completed says
// whether it completed.
func TestWaitAndPrint_PrintsTheEndedStatusAndSaysWhetherItCompleted(t *testing.T) {
	for _, tc := range []struct {
		status    string
		completed bool
	}{{"completed", true}, {"failed", false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "/v1/forget/fr-1", r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"request_id":"fr-1","status":"` + tc.status + `"}`))
		}))
		t.Setenv(EnvToken, "token")
		c, err := New(srv.URL, "")
		require.NoError(t, err)
		var stdout, stderr bytes.Buffer
		completed, err := c.WaitAndPrint(context.Background(), "fr-1", &stdout, &stderr)
		srv.Close()
		require.NoError(t, err)
		assert.Equal(t, tc.completed, completed, tc.status)
		assert.Contains(t, stdout.String(), `"status": "`+tc.status+`"`)
	}
}
