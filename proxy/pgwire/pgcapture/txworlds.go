package pgcapture

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lethe-privacy/lethe/extract"
)

// The worlds: every state a session may be in while answers are in
// flight (see searchpath.go), and the search_paths they resolve names
// under.

// step adds to out the states w may be in once the server has handled a
// statement with effect e: it ran, or it failed. "It failed" also stands
// for a failure of any statement since the previous one with an effect in
// the same batch: the server then skips to Sync just the same. That is why
// statements without an effect need no step, and why every step (even
// ROLLBACK's) has a failing branch.
func (w pathState) step(e effect, out []pathState) []pathState {
	if w.skipping {
		return addWorld(out, w)
	}
	if w.inBlock && w.failed {
		// An aborted block runs only ROLLBACK, COMMIT (which answers
		// ROLLBACK) and ROLLBACK TO an existing savepoint.
		switch e.tx.Kind {
		case extract.TxRollback, extract.TxCommit, extract.TxPrepare:
			ok := w
			ok.end(false, e.tx.Chain)
			out = addWorld(out, ok)
		case extract.TxRollbackTo:
			if w.find(e.tx.Savepoint) >= 0 {
				ok := w
				ok.ran(e, "ROLLBACK")
				out = addWorld(out, ok)
			}
		}
		w.skipping = true
		return addWorld(out, w)
	}
	if !failsSurely(&w, e) {
		ok := w
		ok.ran(e, "COMMIT")
		out = addWorld(out, ok)
	}
	if e.tx.Kind == extract.TxCommit || e.tx.Kind == extract.TxPrepare {
		// The commit itself may fail (a deferred constraint, a
		// serialization failure): the transaction is rolled back and over.
		f := w
		f.end(false, false)
		f.skipping = true
		out = addWorld(out, f)
	}
	w.failed, w.skipping = true, true
	return addWorld(out, w)
}

// failsSurely reports the statements PostgreSQL refuses in state w:
// SAVEPOINT outside a block, RELEASE or ROLLBACK TO of no savepoint.
func failsSurely(w *pathState, e effect) bool {
	switch e.tx.Kind {
	case extract.TxSavepoint:
		return !w.inBlock
	case extract.TxRelease, extract.TxRollbackTo:
		return w.find(e.tx.Savepoint) < 0
	}
	return false
}

// sync adds to out the states w may be in once the server has handled a
// Sync or the end of a simple Query: the skipping ends, and an implicit
// transaction commits, or rolls back if any statement in it failed (one
// with no effect, or the commit itself) — so a running w branches in two.
func (w pathState) sync(out []pathState) []pathState {
	if !w.skipping {
		ok := w
		ok.ready(ok.status())
		out = addWorld(out, ok)
	}
	w.skipping, w.failed = false, true
	w.ready(w.status())
	return addWorld(out, w)
}

// addWorld appends w to out unless out holds the same state already.
func addWorld(out []pathState, w pathState) []pathState {
	for i := range out {
		if out[i].equal(&w) {
			return out
		}
	}
	return append(out, w)
}

const (
	// maxWorlds bounds the states followed; beyond it capture resolves
	// against anyPath until the server's answers narrow them down.
	maxWorlds = 32
	// maxReplay bounds the requests replayed per ReadyForQuery to narrow
	// the worlds down to the answers; beyond it they stay wider (and
	// correct) until the client has fewer requests in flight.
	maxReplay = 256
)

// pathTracker follows a session's search_path (see the top of this file).
// The txTracker, which pairs the server's answers with the requests,
// feeds it: sent and synced as the client sends (only statements with an
// effect), ran, failed and ready as the server answers. Not safe for
// concurrent use.
type pathTracker struct {
	known pathState // after every request the server has answered
	// worlds are the states the session may be in once the server has
	// handled every request sent (a superset: answers narrow it at
	// ReadyForQuery); [known] when nothing is in flight. The first is the
	// one where everything succeeds.
	worlds  []pathState
	scratch []pathState
	wide    bool // more worlds than maxWorlds: resolve against anyPath

	// cands and key memoize the last candidate set and its cache key.
	cands [][]string
	key   string
}

func newPathTracker(initial []string) pathTracker {
	k := newPathState(initial)
	return pathTracker{known: k, worlds: []pathState{k}}
}

// sent records a statement with an effect, sent to the server.
func (t *pathTracker) sent(e effect) {
	if t.wide {
		return
	}
	next := t.scratch[:0]
	for _, w := range t.worlds {
		next = w.step(e, next)
	}
	t.advance(next)
}

// synced records a Sync, or the end of a simple Query, sent to the server.
func (t *pathTracker) synced() {
	if t.wide {
		return
	}
	if len(t.worlds) == 1 && t.worlds[0].idle() {
		return // commit or rollback, the path stays
	}
	next := t.scratch[:0]
	for _, w := range t.worlds {
		next = w.sync(next)
	}
	t.advance(next)
}

func (t *pathTracker) advance(next []pathState) {
	t.scratch, t.worlds = t.worlds[:0], next
	if len(t.worlds) > maxWorlds {
		t.wide = true
		t.worlds = t.worlds[:0]
	}
}

// ran records that the server completed a statement with an effect.
func (t *pathTracker) ran(e effect, tag string) { t.known.ran(e, tag) }

// failed records an ErrorResponse.
func (t *pathTracker) failed() { t.known.failed = true }

// ready records a ReadyForQuery; pending are the requests still in flight.
func (t *pathTracker) ready(status byte, pending []request) {
	t.known.ready(status)
	if !t.wide && t.allSettledAlike() {
		// Narrowing down cannot change any path: keep the worlds.
		if len(pending) == 0 {
			t.worlds = append(t.worlds[:0], t.known)
		}
		return
	}
	if len(pending) > maxReplay {
		return
	}
	t.wide = false
	t.worlds = append(t.worlds[:0], t.known)
	for i := range pending {
		switch r := &pending[i]; {
		case r.sync:
			t.synced()
		case !r.eff.none():
			t.sent(r.eff)
		}
	}
}

// allSettledAlike reports whether every world holds the same single path.
func (t *pathTracker) allSettledAlike() bool {
	for i := range t.worlds {
		if !t.worlds[i].settled() || !samePath(t.worlds[i].current, t.worlds[0].current) {
			return false
		}
	}
	return true
}

// candidates returns the search_paths under which the next statement may
// run, and a key naming that set for the analysis cache. The set is
// shared and must not be modified.
func (t *pathTracker) candidates() (string, [][]string) {
	var buf [maxWorlds][]string
	paths := buf[:0]
	switch {
	case t.wide:
		paths = append(paths, anyPath)
	default:
		for i := range t.worlds {
			if t.worlds[i].live() {
				paths = addPath(paths, t.worlds[i].current)
			}
		}
		if len(paths) == 0 {
			// The statement cannot run (it follows an error in its batch,
			// or comes in an aborted block): any answer will do.
			paths = append(paths, t.known.current)
		}
	}
	if !slices.EqualFunc(paths, t.cands, samePath) {
		t.cands = slices.Clone(paths)
		t.key = pathsKey(t.cands)
	}
	return t.key, t.cands
}

// after is candidates for a statement that follows planned ones, not yet
// sent: the statements before it in the same simple Query.
func (t *pathTracker) after(planned []effect) (string, [][]string) {
	if t.wide || !slices.ContainsFunc(planned, func(e effect) bool { return !e.none() }) {
		return t.candidates()
	}
	ahead := pathTracker{known: t.known, worlds: slices.Clone(t.worlds), cands: t.cands, key: t.key}
	for _, e := range planned {
		if !e.none() {
			ahead.sent(e)
		}
	}
	return ahead.candidates()
}

func addPath(paths [][]string, p []string) [][]string {
	for _, q := range paths {
		if samePath(p, q) {
			return paths
		}
	}
	return append(paths, p)
}

// pathsKey names a set of paths unambiguously: names are length-prefixed,
// since a quoted schema name may hold any character but NUL.
func pathsKey(paths [][]string) string {
	var b strings.Builder
	for _, p := range paths {
		for _, name := range p {
			b.WriteString(strconv.Itoa(len(name)))
			b.WriteByte(':')
			b.WriteString(name)
		}
		b.WriteByte(';')
	}
	return b.String()
}
