package admin

import (
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics_CountRequestsByRouteAndStatus(t *testing.T) {
	h := newHarness(t, cannedEngine())
	h.do("GET", "/v1/forget/"+testID, operatorToken, "")
	h.do("GET", "/v1/forget/"+testID, operatorToken, "")
	h.do("GET", "/v1/forget/ffff0000ffff0000ffff0000ffff0000", auditorToken, "")
	h.do("POST", "/v1/forget/preview", auditorToken, `{"subject":"a"}`)
	h.do("GET", "/v1/log/checkpoint", "", "")
	h.do("GET", "/nowhere", "", "")

	w := h.do("GET", "/metrics", auditorToken, "")
	require.Equal(t, http.StatusOK, w.Code)
	body := w.Body.String()
	for _, want := range []string{
		"# TYPE lethe_admin_requests_total counter\n",
		`lethe_admin_requests_total{route="/v1/forget/{id}",code="200"} 3` + "\n",
		`lethe_admin_requests_total{route="/v1/forget/preview",code="403"} 1` + "\n",
		`lethe_admin_requests_total{route="/v1/log/checkpoint",code="401"} 1` + "\n",
		`lethe_admin_requests_total{route="unmatched",code="404"} 1` + "\n",
	} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, testID, "ids never become label values")
}

func TestMetrics_ExposeTheProxysSeries(t *testing.T) {
	h := newHarness(t, cannedEngine(), func(c *Config) {
		c.Metrics = func() map[string]float64 {
			return map[string]float64{
				"lethe_capture_refused_total":            2,
				`lethe_ledger_pending{store="postgres"}`: 5,
				`lethe_ledger_pending{store="pinecone"}`: 0.5,
				"lethe_forget_oldest_open_seconds":       math.Inf(1),
				"9starts_with_a_digit":                   1,
				"lethe_admin_requests_total":             99,
				`lethe_unclosed{store="x"`:               1,
				"lethe_bad\nname":                        1,
			}
		}
	})
	w := h.do("GET", "/metrics", operatorToken, "")
	require.Equal(t, http.StatusOK, w.Code)
	body := w.Body.String()
	assert.Contains(t, body, "# TYPE lethe_capture_refused_total counter\nlethe_capture_refused_total 2\n")
	assert.Contains(t, body, "# TYPE lethe_ledger_pending gauge\n"+
		`lethe_ledger_pending{store="pinecone"} 0.5`+"\n"+
		`lethe_ledger_pending{store="postgres"} 5`+"\n")
	assert.Contains(t, body, "lethe_forget_oldest_open_seconds +Inf\n")
	assert.NotContains(t, body, "9starts_with_a_digit")
	assert.NotContains(t, body, " 99\n", "the hook cannot override the API's own counter")
	assert.NotContains(t, body, "lethe_unclosed")
	assert.NotContains(t, body, "lethe_bad")
	assert.Contains(t, h.logs.String(), "invalid series name")
}
