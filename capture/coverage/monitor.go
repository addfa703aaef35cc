package coverage

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// Monitor follows the findings of the proxy's repeated checks (at start,
// periodically, after DDL): it logs each finding once when it appears
// (again only if it went away and came back) and keeps the number of
// uncovered tables for the metrics. Logs name tables, columns, indexes
// and namespaces only. It is safe for concurrent use.
type Monitor struct {
	log *slog.Logger
	// action says what the proxy does about an uncovered table, for
	// the log: "reported" or "writes refused".
	action string

	mu        sync.Mutex
	seen      map[Finding]bool
	uncovered atomic.Int64
}

// NewMonitor returns a Monitor logging to log; enforce says whether the
// proxy refuses writes to uncovered tables.
func NewMonitor(log *slog.Logger, enforce bool) *Monitor {
	action := "reported"
	if enforce {
		action = "writes refused"
	}
	return &Monitor{log: log, action: action, seen: map[Finding]bool{}}
}

// Observe takes the findings of one check of the tables.
func (m *Monitor) Observe(findings []Finding) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := make(map[Finding]bool, len(findings))
	n := 0
	for _, f := range findings {
		key := Finding{Code: f.Code, Table: f.Table, Column: f.Column, Index: f.Index, Namespace: f.Namespace}
		now[key] = true
		if f.Code == CodeUncoveredTable {
			n++
		}
		if m.seen[key] {
			continue
		}
		switch f.Code {
		case CodeUncoveredTable:
			m.log.Warn("coverage: table with a vector column or a column named like a subject has no capture rule and no coverage.ignore",
				"table", f.Table, "coverage", m.action)
		case CodeMissingColumn:
			m.log.Error("coverage: capture rule reads a column the table does not have", "table", f.Table, "column", f.Column, "where", f.Where)
		case CodeMissingTable:
			m.log.Info("coverage: rule names a table that does not exist yet", "table", f.Table, "where", f.Where)
		default:
			m.log.Warn("coverage: "+f.Code, "table", f.Table, "index", f.Index, "namespace", f.Namespace)
		}
	}
	m.seen = now
	m.uncovered.Store(int64(n))
}

// UncoveredTables is the number of uncovered tables the last check found.
func (m *Monitor) UncoveredTables() int { return int(m.uncovered.Load()) }
