package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/certificate"
)

// CoverageConfig is what GET /v1/coverage reads.
type CoverageConfig struct {
	// Checkers are the stores' coverage checks, in the order listed (every
	// connector.Wing is one): the same checks lethe-proxy check runs.
	Checkers []CoverageChecker
	// Policy is what the configuration says is covered.
	Policy coverage.Policy
	// Log is the transparency log's records, read for the latest reconcile
	// and sweep events; nil lists none.
	Log LogRecords
	// Timeout bounds each store's check (default DefaultCoverageTimeout);
	// a store that does not answer in time is reported as unreadable.
	Timeout time.Duration
}

// CoverageChecker is one store's coverage check.
type CoverageChecker interface {
	Name() string
	Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error)
}

// LogRecords reads the transparency log's records (translog.Storage).
type LogRecords interface {
	Size(ctx context.Context) (int64, error)
	ReadRecord(ctx context.Context, n int64) ([]byte, error)
}

// DefaultCoverageTimeout bounds one store's coverage check.
const DefaultCoverageTimeout = 30 * time.Second

// Bounds of the log read for the latest runs: the newest records only, so
// that the answer stays quick on a long log.
const (
	runsScanned = 10000
	runsListed  = 10
)

// coverage answers GET /v1/coverage: every store's coverage (what has a
// rule, what is ignored, what has neither) and the latest reconcile and
// sweep runs the log records. A store that cannot be read is reported as
// such; the answer is still 200.
func (s *server) coverage(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		writeError(w, http.StatusBadRequest, "bad_request", "GET /v1/coverage takes no query parameters")
		return
	}
	writeJSON(w, http.StatusOK, s.survey(r.Context()))
}

// survey runs every store's check at once, each bounded by the timeout,
// and reads the latest runs from the log.
func (s *server) survey(ctx context.Context) coverage.Survey {
	cfg := s.coverageCfg
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultCoverageTimeout
	}
	out := coverage.Survey{CheckedAt: time.Now().UTC(), Stores: make([]coverage.StoreSurvey, len(cfg.Checkers)), Runs: []coverage.LoggedRun{}}
	done := make(chan struct{}, len(cfg.Checkers))
	for i, c := range cfg.Checkers {
		go func() {
			out.Stores[i] = s.storeSurvey(ctx, c, cfg.Policy, timeout)
			done <- struct{}{}
		}()
	}
	for range cfg.Checkers {
		<-done
	}
	for _, st := range out.Stores {
		out.Errors += st.Errors()
		out.Warnings += st.Warnings()
		if st.Error != "" {
			out.Unreadable++
		}
	}
	if cfg.Log != nil {
		runs, err := latestRuns(ctx, cfg.Log)
		if err != nil {
			s.log.Error("admin: coverage: reading the transparency log's latest runs", "err", err)
		}
		out.Runs = runs
	}
	return out
}

// storeSurvey is one store's check. It returns when the timeout passes
// even if the check ignores its context (which then finishes on its own).
func (s *server) storeSurvey(ctx context.Context, c CoverageChecker, p coverage.Policy, timeout time.Duration) coverage.StoreSurvey {
	name := c.Name()
	out := coverage.StoreSurvey{Store: name, Rules: p.Rules(name), Ignored: p.Ignored(name), Report: coverage.Report{Findings: []coverage.Finding{}}}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		report coverage.Report
		err    error
	}
	answered := make(chan result, 1)
	go func() {
		report, err := c.Coverage(ctx, p)
		answered <- result{report, err}
	}()
	var res result
	select {
	case res = <-answered:
	case <-ctx.Done():
		res.err = ctx.Err()
	}
	switch {
	case errors.Is(res.err, context.DeadlineExceeded):
		out.Error = fmt.Sprintf("%s: the coverage check did not finish within %s; is the store reachable? lethe-proxy check --config FILE shows the same check", name, timeout)
	case res.err != nil:
		out.Error = fmt.Sprintf("%s: %v", name, res.err)
	default:
		out.Report = res.report
		if out.Findings == nil {
			out.Findings = []coverage.Finding{}
		}
		return out
	}
	s.log.Warn("admin: coverage: a store could not be checked", "store", name, "err", res.err)
	return out
}

// latestRuns reads the newest records of the log, newest first, for the
// latest reconcile and sweep events (at most runsListed of them).
func latestRuns(ctx context.Context, log LogRecords) ([]coverage.LoggedRun, error) {
	runs := []coverage.LoggedRun{}
	size, err := log.Size(ctx)
	if err != nil {
		return runs, err
	}
	for n := size - 1; n >= 0 && n >= size-runsScanned && len(runs) < runsListed; n-- {
		leaf, err := log.ReadRecord(ctx, n)
		if err != nil {
			return runs, fmt.Errorf("record %d: %w", n, err)
		}
		e, err := certificate.ParseEvent(leaf)
		if err != nil {
			continue // not an event of a kind this version knows, so not a run's
		}
		if e.Event == certificate.EventReconcileAdopted || e.Event == certificate.EventRetentionSwept {
			runs = append(runs, coverage.LoggedRun{Event: e.Event, RunID: e.RequestID, LogIndex: n, ReportSHA256: e.ReportSHA256})
		}
	}
	return runs, nil
}
