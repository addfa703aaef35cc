package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// forgetListCmd is lethe-proxy forget list: the forget requests, newest
// first, as a table (or the API's JSON with --json).
func forgetListCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("forget list", usageOf("forget"), stderr)
	clientFlags := adminclient.AddFlags(fs)
	status := fs.String("status", "", "only requests in this status: received, completed or failed")
	overdue := fs.Bool("overdue", false, "only open requests past their deadline")
	limit := fs.Int("limit", 0, fmt.Sprintf("at most this many requests (1 to %d; default %d)", engine.MaxListLimit, engine.DefaultListLimit))
	asJSON := fs.Bool("json", false, "print the API's JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := failer(stderr, "forget list")
	if fs.NArg() > 0 {
		return fail(2, "takes no arguments; choose requests with --status, --overdue and --limit")
	}
	filter := engine.ListFilter{Status: ledger.ForgetStatus(*status), Overdue: *overdue, Limit: *limit}
	if *limit < 0 || *limit > engine.MaxListLimit {
		return fail(2, "--limit is 1 to %d, not %d", engine.MaxListLimit, *limit)
	}
	if err := filter.Check(); err != nil {
		return fail(2, "%v", err)
	}
	c, err := clientFlags.Client()
	if err != nil {
		return fail(2, "%v", err)
	}
	body, err := c.List(context.Background(), filter)
	if err != nil {
		return fail(1, "%v", err)
	}
	if *asJSON {
		adminclient.PrintAnswer("list", body, stdout, stderr)
		return 0
	}
	if err := adminclient.PrintList(body, stdout, stderr); err != nil {
		return fail(1, "%v", err)
	}
	return 0
}
