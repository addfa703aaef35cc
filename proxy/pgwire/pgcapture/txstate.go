package pgcapture

import (
	"slices"

	"github.com/lethe-privacy/lethe/extract"
)

// Following search_path.
//
// PostgreSQL resolves an unqualified table name against search_path when
// it analyses the statement: per statement of a simple Query, and at Bind
// for a prepared statement (plancache.c re-analyses it when the path
// changed since Parse). search_path is transactional (guc.c,
// AtEOXact_GUC; the SET reference page):
//
//   - SET lasts past COMMIT; SET LOCAL (and set_config(…, true)) only until
//     the transaction ends, commit or rollback;
//   - ROLLBACK undoes every SET of the transaction, and so does a COMMIT
//     that answers ROLLBACK (the block had failed), an error in an implicit
//     transaction (a multi-statement Query, an extended-protocol batch up to
//     Sync) and a COMMIT that fails;
//   - ROLLBACK TO SAVEPOINT undoes the SETs made after the savepoint;
//     RELEASE keeps them.
//
// known follows this from the server's answers, so it is exact for every
// statement answered. A statement must be analysed before it is
// forwarded, though, and a pipelining client sends it before the answers
// to earlier ones: did the SET run, did the COMMIT commit? pathTracker
// then keeps every state the session may be in (its worlds), branching on
// each outcome still unknown, and resolves the statement against the
// path of every world in which it would run. Tagging a table that did not
// get the row is harmless (forget deletes by predicate and finds nothing);
// missing the one that did is a lost tag.

// anyPath stands for a search_path capture cannot know (set_config with a
// parameter, too many possible states): unqualified names resolve against
// every schema that has a configured table. No schema name contains NUL.
var anyPath = []string{"\x00"}

func isAnyPath(p []string) bool { return len(p) == 1 && p[0] == anyPath[0] }

// pathSet is a statement's change to search_path.
type pathSet struct {
	set   bool
	local bool     // SET LOCAL: undone when the transaction ends
	path  []string // never modified: states share it
}

// effect is what a statement does to the session state capture follows:
// transaction control, or a change of search_path. Most statements have
// none.
type effect struct {
	tx   extract.TxControl
	path pathSet
}

func (e effect) none() bool { return e.tx.Kind == extract.TxNone && !e.path.set }

// pathSavepoint is a savepoint with the paths that ROLLBACK TO restores.
type pathSavepoint struct {
	name             string
	current, session []string
}

// pathState is a session's search_path as PostgreSQL keeps it.
type pathState struct {
	current   []string // resolves the next statement
	session   []string // what a commit keeps: current, without SET LOCAL
	committed []string // when the transaction began: what a rollback restores
	// savepoints, innermost last. Copies of a state share the array, so it
	// is never written in place: a new savepoint copies it.
	savepoints []pathSavepoint
	inBlock    bool // in an explicit transaction block
	failed     bool // an error aborted the transaction: a block waits for ROLLBACK, an implicit one rolls back at Sync
	skipping   bool // worlds only: an error earlier in the batch; the server discards statements until Sync
}

func newPathState(p []string) pathState {
	return pathState{current: p, session: p, committed: p}
}

// ran applies a statement the server completed with tag.
func (s *pathState) ran(e effect, tag string) {
	switch e.tx.Kind {
	case extract.TxBegin:
		s.inBlock = true
	case extract.TxCommit, extract.TxPrepare:
		// A failed block's COMMIT or PREPARE TRANSACTION answers ROLLBACK.
		// PREPARE ends the session's transaction as a commit does (guc.c).
		s.end(tag != "ROLLBACK", e.tx.Chain)
	case extract.TxRollback:
		s.end(false, e.tx.Chain)
	case extract.TxSavepoint:
		n := len(s.savepoints)
		s.savepoints = append(s.savepoints[:n:n], pathSavepoint{name: e.tx.Savepoint, current: s.current, session: s.session})
	case extract.TxRelease:
		if i := s.find(e.tx.Savepoint); i >= 0 {
			s.savepoints = s.savepoints[:i]
		}
	case extract.TxRollbackTo:
		if i := s.find(e.tx.Savepoint); i >= 0 {
			sp := s.savepoints[i]
			s.current, s.session = sp.current, sp.session
			s.savepoints = s.savepoints[:i+1] // ROLLBACK TO keeps the savepoint itself
			s.failed = false
		}
	}
	if e.path.set {
		s.current = e.path.path
		if !e.path.local {
			s.session = e.path.path
		}
	}
}

// end ends the transaction: a commit keeps its session-level SETs, a
// rollback undoes all of them; SET LOCAL ends either way. chain: COMMIT or
// ROLLBACK AND CHAIN opened the next block at once.
func (s *pathState) end(commit, chain bool) {
	if commit {
		s.committed = s.session
	} else {
		s.session = s.committed
	}
	s.current = s.session
	s.savepoints = nil
	s.inBlock, s.failed = chain, false
}

// ready applies a ReadyForQuery: 'I' ends the implicit transaction, if any.
func (s *pathState) ready(status byte) {
	switch status {
	case 'I':
		s.end(!s.failed, false)
	case 'T':
		s.inBlock = true
	case 'E':
		s.inBlock, s.failed = true, true
	}
}

// status is the ReadyForQuery status the server would send in state s.
func (s *pathState) status() byte {
	switch {
	case !s.inBlock:
		return 'I'
	case s.failed:
		return 'E'
	}
	return 'T'
}

func (s *pathState) find(name string) int {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

// idle reports whether s is outside any transaction with a single path,
// which no outcome can change.
func (s *pathState) idle() bool {
	return !s.inBlock && !s.failed && !s.skipping && s.settled()
}

// live reports whether a statement sent in state s would run at all.
func (s *pathState) live() bool { return !s.skipping && !(s.inBlock && s.failed) }

func (s *pathState) equal(o *pathState) bool {
	if s.inBlock != o.inBlock || s.failed != o.failed || s.skipping != o.skipping ||
		!samePath(s.current, o.current) || !samePath(s.session, o.session) || !samePath(s.committed, o.committed) ||
		len(s.savepoints) != len(o.savepoints) {
		return false
	}
	for i := range s.savepoints {
		a, b := &s.savepoints[i], &o.savepoints[i]
		if a.name != b.name || !samePath(a.current, b.current) || !samePath(a.session, b.session) {
			return false
		}
	}
	return true
}

// samePath compares two paths; states mostly share the same slices.
func samePath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// settled reports whether s holds a single path everywhere, so that no
// outcome can change it.
func (s *pathState) settled() bool {
	if !samePath(s.current, s.session) || !samePath(s.current, s.committed) {
		return false
	}
	for _, sp := range s.savepoints {
		if !samePath(s.current, sp.current) || !samePath(s.current, sp.session) {
			return false
		}
	}
	return true
}
