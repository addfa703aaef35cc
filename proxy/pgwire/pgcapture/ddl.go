package pgcapture

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/lethe-privacy/lethe/extract"
)

// Following DDL sent through the session.
//
// Views, partitions, children, renames and writer functions come from the
// catalog (WriterCatalog), which a connection of the proxy's own reads:
// it sees DDL only once the DDL's transaction has ended. So when a
// session sends DDL (extract.ClassifyDDL), the catalog is read again at
// the first ReadyForQuery that says the session is outside a transaction
// after it, and the next statement the client sends waits for that read.
// Until then, whatever may write is refused (strict mode) or recorded as
// unattributed (permissive) for the configured tables the DDL names
// (extract.Rules.WithPendingDDL): a rename, a new partition or a new
// writer function inside the same transaction takes effect before Lethe
// can know it. Likewise an INSERT without a column list into a table
// whose column order the DDL may change (ADD or DROP COLUMN, DROP and
// CREATE TABLE) is unattributed until the catalog has been read again
// (extract.Rules.WithPendingColumnOrder): it would otherwise be read with
// the order of the last read.

// catalogWait bounds how long a statement waits for the catalog read that
// follows DDL; past it, the statement is analysed with what is known.
const catalogWait = 30 * time.Second

// ddlFollower is a session's DDL not yet read from the catalog. The
// client-side goroutine notes DDL and waits; the server-side one sees
// ReadyForQuery; session.mu orders them.
type ddlFollower struct {
	tables []string // configured tables the pending DDL names, sorted
	// reordered are the configured tables whose column order the pending
	// DDL may change, sorted (extract.DDLChange.Reordered).
	reordered []string
	// waitEnd: DDL was sent whose transaction has not been seen to end;
	// endsAt is the count of requests (exchanges.sent) up to the one that
	// ends the batch holding it.
	waitEnd bool
	endsAt  uint64
	// active is set while DDL is pending or a catalog read is awaited:
	// without it, rules costs one atomic load.
	active atomic.Bool
	// read is the catalog read requested once the DDL's transaction
	// ended; the next client message waits for it.
	read <-chan struct{}

	// cache: the pending rules built from base for tables.
	base, pending     *extract.Rules
	builtFor, builtRe []string
}

// noteDDL looks for DDL in the statements of one Query or Parse and, when
// it finds some, has the session wait for the catalog (see above).
func (s *session) noteDDL(stmts ...string) {
	var tables, reordered []string
	found := false
	for _, sql := range stmts {
		c, ok := s.rules.ClassifyDDL(sql)
		if !ok {
			continue
		}
		found = true
		tables = addNew(tables, c.Tables)
		reordered = addNew(reordered, c.Reordered)
	}
	if !found {
		return
	}
	s.capture.DDLSeen()
	s.lock(func() {
		d := &s.ddl
		d.waitEnd, d.endsAt = true, s.exchanges.sent.Load()+1
		d.active.Store(true)
		d.tables = addNew(d.tables, tables)
		slices.Sort(d.tables)
		d.reordered = addNew(d.reordered, reordered)
		slices.Sort(d.reordered)
	})
	s.followRules()
}

// addNew appends to list the names of more it does not hold yet.
func addNew(list, more []string) []string {
	for _, t := range more {
		if !slices.Contains(list, t) {
			list = append(list, t)
		}
	}
	return list
}

// ddlReady sees the answered-th ReadyForQuery; s.mu is held. Once the
// DDL's batch is answered outside a transaction, the DDL has committed or
// rolled back: the catalog is read again.
func (s *session) ddlReady(status byte, answered uint64, catalog *WriterCatalog) {
	d := &s.ddl
	if !d.waitEnd || answered < d.endsAt || status != 'I' {
		return
	}
	d.waitEnd = false
	s.capture.DDLSeen()
	d.read = catalog.Request()
	if d.read == nil {
		d.tables, d.reordered = nil, nil // nothing reads the catalog: nothing to wait for
		d.active.Store(false)
	}
}

// rules returns the rules the session's next statement is analysed with:
// base, or base refusing writes (or inserts without a column list) while
// DDL is pending. It first waits for a catalog read the session asked for.
func (d *ddlFollower) rules(s *session, base *extract.Rules) *extract.Rules {
	if !d.active.Load() {
		return base // the common case
	}
	var read <-chan struct{}
	var tables, reordered []string
	s.lock(func() { read, tables, reordered = d.read, d.tables, d.reordered })
	if read != nil {
		t := time.NewTimer(catalogWait)
		select {
		case <-read:
		case <-t.C:
			s.capture.Logger().Warn("the catalog read after DDL did not end in time; analysing with the last known catalog", "waited", catalogWait)
		}
		t.Stop()
		base = s.capture.Rules() // what the read put in force
		s.lock(func() {
			if d.read == read {
				d.read = nil
				if !d.waitEnd {
					d.tables, d.reordered = nil, nil
					d.active.Store(false)
				}
			}
			tables, reordered = d.tables, d.reordered
		})
	}
	if len(tables) == 0 && len(reordered) == 0 {
		return base
	}
	if d.base != base || !slices.Equal(d.builtFor, tables) || !slices.Equal(d.builtRe, reordered) {
		d.base, d.builtFor, d.builtRe = base, slices.Clone(tables), slices.Clone(reordered)
		d.pending = base
		if len(tables) > 0 {
			d.pending = d.pending.WithPendingDDL(tables)
		}
		if len(reordered) > 0 {
			d.pending = d.pending.WithPendingColumnOrder(reordered)
		}
	}
	return d.pending
}
