package pgcapture

import (
	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// request is a client request awaiting its result from the server, in the
// order the server will answer.
type request struct {
	seq     uint64            // identifies a statement still in flight (see AddIntent)
	sync    bool              // Sync, or the end of a simple Query: answered by ReadyForQuery
	opaque  bool              // a simple Query of unknown statements: absorbs completions until its end
	eff     effect            // transaction control or search_path change, if the statement is one
	intents []ledger.IntentID // write-ahead intents of this statement's writes (COPY adds them as rows stream)
	deletes []extract.Tag     // the application's deletes by id, applied if they commit
}

// AddIntent attaches an intent to the statement seq (as Statement returned
// it) while it is still in flight: a COPY's rows arrive after the COPY
// statement was queued. It reports false when the statement is answered
// already; the intent then stays pending, for recovery.
func (t *txTracker) AddIntent(seq uint64, id ledger.IntentID) bool {
	for i := len(t.queue) - 1; i >= 0; i-- {
		if t.queue[i].seq == seq {
			t.queue[i].intents = append(t.queue[i].intents, id)
			return true
		}
	}
	return false
}

// attach gives statement seq its intent once durable: to the statement
// while the server has not answered it, or to the transaction's executed
// writes when it has. The transaction cannot have ended meanwhile: every
// message that could end it waits for settle.
func (t *txTracker) attach(seq uint64, id ledger.IntentID) {
	if !t.AddIntent(seq, id) {
		t.writes = append(t.writes, id)
	}
}

// txTracker is a session's one transaction tracker. It follows the
// session's transactions from the requests sent and the results received
// and owns their state: block, failure, savepoints and search_path
// (txstate.go), as the answers left it and as the requests in flight may
// leave it (txworlds.go). From that it decides for each write-ahead intent
// whether its writes committed (PostgreSQL protocol, "Extended Query" and
// "Simple Query": a transaction ends at a ReadyForQuery, never at Flush; a
// COMMIT of a failed block answers ROLLBACK), and resolves the next
// statement's unqualified names (candidates). It never guesses: when the
// outcome cannot be known (the session ends mid-transaction, PREPARE
// TRANSACTION) the intent stays pending for recovery to resolve.
//
// Not safe for concurrent use: the caller serializes client-side and
// server-side calls.
type txTracker struct {
	out     capture.Decisions
	queue   []request // values: queuing a request allocates nothing once the slice has grown
	qbuf    []request // the array queue is a suffix of (see push)
	seq     uint64
	writes  []ledger.IntentID // executed writes of the current transaction
	deletes []extract.Tag     // executed deletes by id of the current transaction
	// known is the transaction as the server's answers left it; its
	// savepoints mark where writes and deletes stood.
	known txState
	// implicitFailed: an error outside a block, so the implicit
	// transaction's writes roll back at ReadyForQuery 'I'. A ReadyForQuery
	// 'I' after an error inside a block (a COMMIT that fails) confirms the
	// writes, though known counts the block as failed.
	implicitFailed bool
	// worlds are the states the session may be in once every request sent
	// is answered.
	worlds worlds
}

// newTxTracker returns a tracker for a session that starts with
// searchPath.
func newTxTracker(out capture.Decisions, searchPath []string) *txTracker {
	known := newTxState(searchPath)
	return &txTracker{out: out, known: known, worlds: newWorlds(known)}
}

// Statement records a statement about to be executed (Execute, or one
// statement of a simple Query) with its effect on the transaction or
// search_path, the application's deletes by id and the intents of its
// writes, if any. The returned seq takes intents made later (COPY rows,
// see AddIntent).
func (t *txTracker) Statement(e effect, deletes []extract.Tag, intents ...ledger.IntentID) uint64 {
	t.seq++
	t.push(request{seq: t.seq, eff: e, intents: intents, deletes: deletes})
	if !e.none() {
		t.worlds.sent(e)
	}
	return t.seq
}

// push queues a request. Answered requests leave from the front, so an
// emptied queue starts again at the front of its array, which it outgrows
// only when more requests are in flight than ever before.
func (t *txTracker) push(r request) {
	if len(t.queue) == 0 {
		t.queue = t.qbuf[:0]
	}
	before := cap(t.queue)
	t.queue = append(t.queue, r)
	if cap(t.queue) != before {
		t.qbuf = t.queue[:0] // a new array, which the queue starts
	}
}

// Opaque records a simple Query whose statements the caller did not split
// because none writes a configured table or controls the transaction.
func (t *txTracker) Opaque() {
	t.push(request{opaque: true})
}

// Sync records a Sync message or the end of a simple Query.
func (t *txTracker) Sync() {
	t.push(request{sync: true})
	t.worlds.synced()
}

// Complete records a CommandComplete (also EmptyQueryResponse and
// PortalSuspended) with its command tag.
func (t *txTracker) Complete(tag string) {
	if len(t.queue) == 0 || t.queue[0].sync {
		return // a completion with no statement of ours in flight: nothing to decide
	}
	r := t.queue[0]
	if r.opaque {
		return // stays until its end; its completions change no write of ours
	}
	t.queue = t.queue[1:]
	t.writes = append(t.writes, r.intents...)
	t.deletes = append(t.deletes, r.deletes[:min(len(r.deletes), max(0, maxDeletesMarked-len(t.deletes)))]...)
	if r.eff.none() {
		return
	}
	t.decide(r.eff.tx, tag)
	t.known.ran(r.eff, tag, marks{writes: len(t.writes), deletes: len(t.deletes)})
}

// decide settles the transaction's writes and deletes when statement tx,
// completed with tag, ends the transaction or rolls back to a savepoint.
// It reads known's savepoints before known applies the statement.
func (t *txTracker) decide(tx extract.TxControl, tag string) {
	switch tx.Kind {
	case extract.TxCommit:
		// COMMIT of a failed block answers ROLLBACK.
		if tag == "ROLLBACK" {
			t.dropFrom(marks{})
		} else {
			t.confirmAll()
		}
		t.implicitFailed = false
	case extract.TxRollback:
		t.dropFrom(marks{})
		t.implicitFailed = false
	case extract.TxRollbackTo:
		if i := t.known.find(tx.Savepoint); i >= 0 {
			t.dropFrom(t.known.savepoints[i].at)
		}
	case extract.TxPrepare:
		if tag == "ROLLBACK" {
			// PREPARE TRANSACTION of a failed block answers ROLLBACK:
			// nothing was prepared.
			t.dropFrom(marks{})
		} else {
			// The transaction now lives on as a prepared transaction whose
			// outcome will be decided by COMMIT/ROLLBACK PREPARED, possibly
			// from another session: leave its intents pending.
			t.writes, t.deletes = t.writes[:0], t.deletes[:0]
		}
		t.implicitFailed = false
	}
}

// Error records an ErrorResponse. The statement in flight failed, and the
// server skips the rest of the batch (extended protocol) or of the Query
// (simple protocol) up to the next Sync.
func (t *txTracker) Error() {
	var skipped []ledger.IntentID
	for len(t.queue) > 0 && !t.queue[0].sync {
		skipped = append(skipped, t.queue[0].intents...)
		t.queue = t.queue[1:]
	}
	if len(skipped) > 0 {
		t.out.Drop(skipped)
	}
	if !t.known.inBlock {
		t.implicitFailed = true // the implicit transaction rolls back at Sync
	}
	t.known.failed = true
	// In a block the server is now in the failed state ('E'); ROLLBACK or
	// ROLLBACK TO SAVEPOINT decides what happens to the writes so far.
}

// Ready records a ReadyForQuery with its transaction status.
func (t *txTracker) Ready(status byte) {
	// Everything up to and including the Sync is answered now. A statement
	// still queued before it got no completion: the server skipped it after
	// an error that Error saw before the statement was queued (pipelined
	// behind the failing one), so its writes did not happen.
	var skipped []ledger.IntentID
	for len(t.queue) > 0 {
		r := t.queue[0]
		t.queue = t.queue[1:]
		if r.sync {
			break
		}
		skipped = append(skipped, r.intents...)
	}
	if len(skipped) > 0 {
		t.out.Drop(skipped)
	}
	if status == 'I' {
		if t.implicitFailed {
			t.dropFrom(marks{})
		} else {
			t.confirmAll() // the implicit transaction committed at Sync
		}
		t.implicitFailed = false
	}
	t.known.ready(status)
	t.worlds.narrow(&t.known, t.queue)
}

// Abandon is called when the session ends. Writes whose transaction had
// not ended are left pending: the server may or may not have committed
// them (a COMMIT may have been processed after the connection broke).
func (t *txTracker) Abandon() {
	t.queue, t.writes, t.deletes, t.known.savepoints = nil, nil, nil, nil
}

func (t *txTracker) confirmAll() {
	if len(t.writes) > 0 {
		t.out.Confirm(append([]ledger.IntentID(nil), t.writes...))
	}
	if len(t.deletes) > 0 {
		t.out.Deleted(ledger.StorePostgres, append([]extract.Tag(nil), t.deletes...))
	}
	t.writes, t.deletes = t.writes[:0], t.deletes[:0]
}

// dropFrom drops the writes and forgets the deletes after at: they were
// rolled back.
func (t *txTracker) dropFrom(at marks) {
	if at.writes < len(t.writes) {
		t.out.Drop(append([]ledger.IntentID(nil), t.writes[at.writes:]...))
	}
	t.writes = t.writes[:at.writes]
	t.deletes = t.deletes[:min(at.deletes, len(t.deletes))]
}

// candidates returns the search_paths under which the next statement may
// run, and a key naming that set for the analysis cache. The set is
// shared and must not be modified.
func (t *txTracker) candidates() (string, [][]string) { return t.worlds.candidates(&t.known) }

// after is candidates for a statement that follows planned ones, not yet
// sent: the statements before it in the same simple Query.
func (t *txTracker) after(planned []effect) (string, [][]string) {
	return t.worlds.after(&t.known, planned)
}
