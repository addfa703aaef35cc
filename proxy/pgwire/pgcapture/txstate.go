package pgcapture

import (
	"slices"

	"github.com/lethe-privacy/lethe/extract"
)

// A session's transaction as PostgreSQL keeps it: the block, its failure,
// its savepoints and search_path.
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
// The txTracker keeps one txState from the server's answers (known), exact
// for every statement answered, and marks in its savepoints where the
// transaction's writes stood. A statement must be analysed before it is
// forwarded, though, and a pipelining client sends it before the answers
// to earlier ones: did the SET run, did the COMMIT commit? The tracker
// then also keeps every state the session may be in (its worlds,
// txworlds.go), branching on each outcome still unknown, and resolves the
// statement against the path of every world in which it would run.
// Tagging a table that did not get the row is harmless (forget deletes by
// predicate and finds nothing); missing the one that did is a lost tag.

// marks counts the transaction's writes and deletes that precede a
// savepoint: ROLLBACK TO drops those after them.
type marks struct{ writes, deletes int }

// savepoint is a savepoint with what ROLLBACK TO restores: the paths, and
// the writes and deletes made before it (only the known state's marks are
// read: the worlds decide no write).
type savepoint struct {
	name             string
	current, session []string
	at               marks
}

// txState is a session's transaction and search_path as PostgreSQL keeps
// them.
type txState struct {
	current   []string // resolves the next statement
	session   []string // what a commit keeps: current, without SET LOCAL
	committed []string // when the transaction began: what a rollback restores
	// savepoints, innermost last. Copies of a state share the array, so it
	// is never written in place: a new savepoint copies it.
	savepoints []savepoint
	inBlock    bool // in an explicit transaction block
	failed     bool // an error aborted the transaction: a block waits for ROLLBACK, an implicit one rolls back at Sync
	skipping   bool // worlds only: an error earlier in the batch; the server discards statements until Sync
}

func newTxState(p []string) txState {
	return txState{current: p, session: p, committed: p}
}

// ran applies a statement the server completed with tag; at counts the
// writes and deletes before it, for a SAVEPOINT to keep.
func (s *txState) ran(e effect, tag string, at marks) {
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
		s.savepoints = append(s.savepoints[:n:n], savepoint{name: e.tx.Savepoint, current: s.current, session: s.session, at: at})
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
func (s *txState) end(commit, chain bool) {
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
func (s *txState) ready(status byte) {
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
func (s *txState) status() byte {
	switch {
	case !s.inBlock:
		return 'I'
	case s.failed:
		return 'E'
	}
	return 'T'
}

// find returns the index of the innermost savepoint named name, or -1.
func (s *txState) find(name string) int {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

// idle reports whether s is outside any transaction with a single path,
// which no outcome can change.
func (s *txState) idle() bool {
	return !s.inBlock && !s.failed && !s.skipping && s.settled()
}

// live reports whether a statement sent in state s would run at all.
func (s *txState) live() bool { return !s.skipping && !(s.inBlock && s.failed) }

// equal compares two worlds; savepoint marks, which worlds do not use, are
// not compared.
func (s *txState) equal(o *txState) bool {
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
func (s *txState) settled() bool {
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
