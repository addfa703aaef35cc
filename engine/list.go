package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Limits of a request listing.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListFilter chooses the requests List returns. The zero value is the
// newest DefaultListLimit requests.
type ListFilter struct {
	// Status keeps requests in this status only ("" for any).
	Status ledger.ForgetStatus
	// Overdue keeps open requests past their deadline only; Status must
	// then be "" or received.
	Overdue bool
	// Limit is the most requests returned, 1 to MaxListLimit (0:
	// DefaultListLimit).
	Limit int
}

// RequestSummary is one request in a listing: no subject data, so a
// listing can be shown to anyone who may read request statuses.
type RequestSummary struct {
	RequestID  string              `json:"request_id"`
	Status     ledger.ForgetStatus `json:"status"`
	ReceivedAt time.Time           `json:"received_at"`
	Deadline   time.Time           `json:"deadline"`
	UpdatedAt  time.Time           `json:"updated_at"`
	// Overdue: still open after its deadline.
	Overdue bool `json:"overdue"`
}

// RequestList is a page of requests, newest first. More says that the
// filter chose more requests than the limit let through.
type RequestList struct {
	Requests []RequestSummary `json:"requests"`
	More     bool             `json:"more"`
}

// Check reports what is wrong with f, naming the fix, in words fit for
// the API's and the CLI's callers.
func (f ListFilter) Check() error {
	switch f.Status {
	case "", ledger.ForgetReceived, ledger.ForgetCompleted, ledger.ForgetFailed:
	default:
		return fmt.Errorf("unknown request status %q; use received, completed or failed", f.Status)
	}
	if f.Overdue && f.Status != "" && f.Status != ledger.ForgetReceived {
		return fmt.Errorf("only received requests can be overdue, not %s ones; drop the status or the overdue filter", f.Status)
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return fmt.Errorf("a listing's limit is 1 to %d, not %d", MaxListLimit, f.Limit)
	}
	return nil
}

// List returns the forget requests f chooses, newest first, with their
// deadlines and overdue flags.
func (e *Engine) List(ctx context.Context, f ListFilter) (RequestList, error) {
	if err := f.Check(); err != nil {
		return RequestList{}, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	now := e.cfg.Now()
	q := ledger.ForgetFilter{Status: f.Status, Limit: limit + 1} // one more tells whether there are more
	if f.Overdue {
		q.Status, q.DeadlineBefore = ledger.ForgetReceived, now
	}
	rows, err := e.cfg.Ledger.ListForgets(ctx, q)
	if err != nil {
		return RequestList{}, err
	}
	out := RequestList{Requests: []RequestSummary{}}
	if len(rows) > limit {
		rows, out.More = rows[:limit], true
	}
	for _, r := range rows {
		out.Requests = append(out.Requests, RequestSummary{
			RequestID: r.ID, Status: r.Status, ReceivedAt: r.ReceivedAt, Deadline: r.Deadline, UpdatedAt: r.UpdatedAt,
			Overdue: overdue(r.Status, r.Deadline, now),
		})
	}
	return out, nil
}

// overdue is whether a request in status, due at deadline, is late at now.
func overdue(status ledger.ForgetStatus, deadline, now time.Time) bool {
	return status == ledger.ForgetReceived && now.After(deadline)
}
