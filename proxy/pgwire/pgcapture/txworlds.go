package pgcapture

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lethe-privacy/lethe/extract"
)

// The worlds: every state a session may be in while answers are in
// flight (see txstate.go), and the search_paths they resolve names under.

// step adds to out the states w may be in once the server has handled a
// statement with effect e: it ran, or it failed. "It failed" also stands
// for a failure of any statement since the previous one with an effect in
// the same batch: the server then skips to Sync just the same. That is why
// statements without an effect need no step, and why every step (even
// ROLLBACK's) has a failing branch.
func (w txState) step(e effect, out []txState) []txState {
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
				ok.ran(e, "ROLLBACK", marks{})
				out = addWorld(out, ok)
			}
		}
		w.skipping = true
		return addWorld(out, w)
	}
	if !failsSurely(&w, e) {
		ok := w
		ok.ran(e, "COMMIT", marks{})
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
func failsSurely(w *txState, e effect) bool {
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
func (w txState) sync(out []txState) []txState {
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
func addWorld(out []txState, w txState) []txState {
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

// worlds are the states a session may be in once the server has handled
// every request sent: a superset, which the server's answers narrow down
// at ReadyForQuery. The txTracker feeds them: sent and synced as the
// client sends (only statements with an effect), narrow as the server
// answers. Not safe for concurrent use.
type worlds struct {
	// states holds one state per outcome still possible; [known] when
	// nothing is in flight. The first is the one where everything
	// succeeds.
	states  []txState
	scratch []txState
	wide    bool // more worlds than maxWorlds: resolve against anyPath

	// cands and key memoize the last candidate set and its cache key.
	cands [][]string
	key   string
}

func newWorlds(known txState) worlds {
	return worlds{states: []txState{known}}
}

// sent records a statement with an effect, sent to the server.
func (ws *worlds) sent(e effect) {
	if ws.wide {
		return
	}
	next := ws.scratch[:0]
	for _, w := range ws.states {
		next = w.step(e, next)
	}
	ws.advance(next)
}

// synced records a Sync, or the end of a simple Query, sent to the server.
func (ws *worlds) synced() {
	if ws.wide {
		return
	}
	if len(ws.states) == 1 && ws.states[0].idle() {
		return // commit or rollback, the path stays
	}
	next := ws.scratch[:0]
	for _, w := range ws.states {
		next = w.sync(next)
	}
	ws.advance(next)
}

func (ws *worlds) advance(next []txState) {
	ws.scratch, ws.states = ws.states[:0], next
	if len(ws.states) > maxWorlds {
		ws.wide = true
		ws.states = ws.states[:0]
	}
}

// narrow starts the worlds again from known, the state a ReadyForQuery
// just left, replaying pending, the requests still in flight.
func (ws *worlds) narrow(known *txState, pending []request) {
	if !ws.wide && ws.allSettledAlike() {
		// Narrowing down cannot change any path: keep the worlds.
		if len(pending) == 0 {
			ws.states = append(ws.states[:0], *known)
		}
		return
	}
	if len(pending) > maxReplay {
		return
	}
	ws.wide = false
	ws.states = append(ws.states[:0], *known)
	for i := range pending {
		switch r := &pending[i]; {
		case r.sync:
			ws.synced()
		case !r.eff.none():
			ws.sent(r.eff)
		}
	}
}

// allSettledAlike reports whether every world holds the same single path.
func (ws *worlds) allSettledAlike() bool {
	for i := range ws.states {
		if !ws.states[i].settled() || !samePath(ws.states[i].current, ws.states[0].current) {
			return false
		}
	}
	return true
}

// candidates returns the search_paths under which the next statement may
// run, and a key naming that set for the analysis cache; known answers
// for a statement that cannot run. The set is shared and must not be
// modified.
func (ws *worlds) candidates(known *txState) (string, [][]string) {
	var buf [maxWorlds][]string
	paths := buf[:0]
	switch {
	case ws.wide:
		paths = append(paths, anyPath)
	default:
		for i := range ws.states {
			if ws.states[i].live() {
				paths = addPath(paths, ws.states[i].current)
			}
		}
		if len(paths) == 0 {
			// The statement cannot run (it follows an error in its batch,
			// or comes in an aborted block): any answer will do.
			paths = append(paths, known.current)
		}
	}
	if !slices.EqualFunc(paths, ws.cands, samePath) {
		ws.cands = slices.Clone(paths)
		ws.key = pathsKey(ws.cands)
	}
	return ws.key, ws.cands
}

// after is candidates for a statement that follows planned ones, not yet
// sent: the statements before it in the same simple Query.
func (ws *worlds) after(known *txState, planned []effect) (string, [][]string) {
	if ws.wide || !slices.ContainsFunc(planned, func(e effect) bool { return !e.none() }) {
		return ws.candidates(known)
	}
	ahead := worlds{states: slices.Clone(ws.states), cands: ws.cands, key: ws.key}
	for _, e := range planned {
		if !e.none() {
			ahead.sent(e)
		}
	}
	return ahead.candidates(known)
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
