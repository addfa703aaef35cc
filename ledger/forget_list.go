package ledger

import "time"

// ForgetSummary is one request as a listing shows it: no subject, no
// state, no certificate, so that listing many requests reads little and
// reveals nothing about the people behind them.
type ForgetSummary struct {
	ID         string
	Status     ForgetStatus
	ReceivedAt time.Time
	Deadline   time.Time
	UpdatedAt  time.Time
}

// ForgetFilter chooses the requests ListForgets returns. The zero value
// is every request.
type ForgetFilter struct {
	// Status keeps requests in this status only ("" for any).
	Status ForgetStatus
	// DeadlineBefore keeps requests whose deadline is before it (zero: no
	// bound); with Status received it finds the overdue ones.
	DeadlineBefore time.Time
	// Limit is the most requests returned (0: no limit).
	Limit int
}

// forgetListWhere is the WHERE clause and arguments of f, with
// placeholder(n) naming the n-th argument (1-based) in the backend's
// syntax.
func forgetListWhere(f ForgetFilter, placeholder func(n int) string, when func(time.Time) any) (string, []any) {
	var conds []string
	var args []any
	if f.Status != "" {
		args = append(args, string(f.Status))
		conds = append(conds, "status = "+placeholder(len(args)))
	}
	if !f.DeadlineBefore.IsZero() {
		args = append(args, when(f.DeadlineBefore))
		conds = append(conds, "deadline < "+placeholder(len(args)))
	}
	where := ""
	for i, c := range conds {
		if i == 0 {
			where = " WHERE " + c
		} else {
			where += " AND " + c
		}
	}
	where += " ORDER BY received_at DESC, id DESC"
	if f.Limit > 0 {
		args = append(args, f.Limit)
		where += " LIMIT " + placeholder(len(args))
	}
	return where, args
}
