package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/lethe-privacy/lethe/engine"
)

// List is the forget requests f chooses, newest first, as the API sent
// them (JSON: engine.RequestList).
func (c *Client) List(ctx context.Context, f engine.ListFilter) ([]byte, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.Overdue {
		q.Set("overdue", "true")
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	path := "/v1/forget"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.call(ctx, http.MethodGet, path, nil)
}

// PrintList prints a listing (the JSON List returned) as a table on
// stdout, one request a line, and on stderr what to do when there are
// more requests than shown or overdue ones.
func PrintList(body []byte, stdout, stderr io.Writer) error {
	var list engine.RequestList
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("the admin API's list of requests is not JSON: %w", err)
	}
	if len(list.Requests) == 0 {
		fmt.Fprintln(stderr, "No forget request matches.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tSTATUS\tRECEIVED\tDEADLINE\tOVERDUE")
	overdue := 0
	for _, r := range list.Requests {
		late := "no"
		if r.Overdue {
			late, overdue = "yes", overdue+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.RequestID, r.Status,
			r.ReceivedAt.UTC().Format(time.RFC3339), r.Deadline.UTC().Format(time.RFC3339), late)
	}
	tw.Flush()
	if list.More {
		fmt.Fprintf(stderr, "More requests match than shown; raise --limit (at most %d) or narrow with --status or --overdue.\n", engine.MaxListLimit)
	}
	if overdue > 0 {
		fmt.Fprintf(stderr, "%d shown request(s) are past their deadline; see why with `lethe-proxy forget status ID`.\n", overdue)
	}
	return nil
}
