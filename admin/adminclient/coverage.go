package adminclient

import (
	"context"
	"net/http"
)

// Coverage is every store's coverage as the API sent it (JSON:
// coverage.Survey): the tables and namespaces with a rule, those ignored,
// those with neither, and the log's latest reconcile and sweep runs.
func (c *Client) Coverage(ctx context.Context) ([]byte, error) {
	return c.call(ctx, http.MethodGet, "/v1/coverage", nil)
}
