package pgwire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// A refused statement must fail exactly as if the server had failed it: the
// error arrives in order with the other responses, the transaction (implicit
// or explicit) aborts, and the rest of an extended-protocol batch is skipped
// until Sync. Rather than re-implement that state machine, the proxy sends
// the server, in place of the refused message, a statement that raises the
// refusal's error:
//
//   - a refused Query becomes a Query of a DO block that raises it;
//   - a refused Parse, Bind or Execute becomes Parse, Bind and Execute of that
//     DO block (unnamed statement and portal) followed by Flush. The server's
//     ParseComplete and BindComplete for it are removed from the stream;
//   - a refused CopyData or CopyDone becomes CopyFail, which the server
//     reports as SQLSTATE 57014 with the refusal's message;
//   - a refused Sync is preceded by Parse, Bind and Execute of that DO
//     block: the implicit or explicit transaction it would have ended
//     aborts, and the Sync ends it.
//
// Messages after a refused one are forwarded as usual; the server discards
// them until Sync as it does after any error.
//
// The server's ErrorResponse for a raising DO block says where it was raised
// (Where: "PL/pgSQL function inline_code_block line 1 at RAISE", and the
// server's source file, line and routine), which clients print as CONTEXT.
// The refusal is the proxy's own error, not a PL/pgSQL function's: the
// client gets that ErrorResponse without those fields (see
// withoutServerContext); the Observer still sees it as the server sent it.

// refusalDefaultCode is used when a Refusal carries no valid SQLSTATE.
const refusalDefaultCode = "LT000"

func (ss *session) refuse(typ byte, r *Refusal) verdict {
	r = normalizeRefusal(r)
	// Never r.Message: it may quote the statement (logs hold no statements).
	ss.log.Info("statement refused", "code", r.Code, "reason", r.LogReason)
	switch typ {
	case 'Q':
		ss.refusals.add(injection{epoch: ss.sent.Load(), code: r.Code, message: r.Message, simple: true})
		return verdict{prefix: fixLength(appendCString(appendMessageHeader(nil, 'Q'), raiseStatement(r))), drop: true}
	case 'P', 'B', 'E':
		ss.refusals.add(injection{epoch: ss.sent.Load(), code: r.Code, message: r.Message})
		return verdict{prefix: raiseExtended(r), drop: true}
	case 'd', 'c':
		return verdict{prefix: fixLength(appendCString(appendMessageHeader(nil, 'f'), r.Message)), drop: true}
	case 'S':
		// The statements before it were forwarded: the error goes in
		// before the Sync, which still ends the (now aborted) transaction.
		ss.refusals.add(injection{epoch: ss.sent.Load(), code: r.Code, message: r.Message})
		return verdict{prefix: raiseExtended(r)}
	}
	ss.log.Warn("observer refused a message that cannot be refused; forwarding it", "type", string(typ))
	return verdict{}
}

// errSessionEnded stops the client side after an observer ended the
// session (Refusal.EndSession).
var errSessionEnded = errors.New("the observer ended the session")

// endSession ends the session for r: the client gets r as a FATAL error.
func (ss *session) endSession(r *Refusal) {
	r = normalizeRefusal(r)
	ss.log.Warn("session ended by the observer", "code", r.Code, "reason", r.LogReason)
	ss.terminate(errorFields{Severity: "FATAL", Code: r.Code, Message: r.Message, Detail: r.Detail, Hint: r.Hint})
}

func normalizeRefusal(r *Refusal) *Refusal {
	out := *r
	if !validSQLState(out.Code) {
		out.Code = refusalDefaultCode
	}
	if out.Message == "" {
		out.Message = "lethe-proxy refused this statement"
	}
	return &out
}

// validSQLState accepts five characters [0-9A-Z] outside the classes 00
// (success), 01 (warning) and 02 (no data), which are not errors.
func validSQLState(code string) bool {
	if len(code) != 5 || code[:2] == "00" || code[:2] == "01" || code[:2] == "02" {
		return false
	}
	for _, c := range code {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// raiseStatement is a DO block raising r. Every text is dollar-quoted with
// a tag chosen so that the literal holds exactly that text (no content can
// end it early), first for each field inside the body, then for the body.
func raiseStatement(r *Refusal) string {
	fields := [...]struct{ name, value string }{{"MESSAGE", r.Message}, {"DETAIL", r.Detail}, {"HINT", r.Hint}}
	for n := 0; ; n++ {
		inner, outer := fmt.Sprintf("$lethe_s%d$", n), fmt.Sprintf("$lethe_do%d$", n)
		body := "BEGIN RAISE EXCEPTION USING ERRCODE = '" + r.Code + "'"
		ok := true
		for _, f := range fields {
			if f.value != "" {
				ok = ok && quotable(f.value, inner)
				body += ", " + f.name + " = " + inner + f.value + inner
			}
		}
		body += "; END"
		if ok && quotable(body, outer) {
			return "DO " + outer + body + outer
		}
	}
}

// quotable reports whether $tag$text$tag$ is one literal holding exactly text.
func quotable(text, tag string) bool {
	return strings.Index(text+tag, tag) == len(text)
}

// raiseExtended is Parse, Bind, Execute of the raising DO block, then Flush
// so the error reaches a client that waits before sending Sync.
func raiseExtended(r *Refusal) []byte {
	b := appendMessageHeader(nil, 'P')
	b = appendCString(b, "")
	b = appendCString(b, raiseStatement(r))
	b = append(b, 0, 0) // no parameter types
	b = fixLength(b)

	start := len(b)
	b = appendMessageHeader(b, 'B')
	b = append(b, 0, 0)       // unnamed portal, unnamed statement
	b = append(b, 0, 0, 0, 0) // no format codes, no parameters
	b = append(b, 0, 0)       // no result format codes
	b = fixLengthFrom(b, start)

	start = len(b)
	b = appendMessageHeader(b, 'E')
	b = append(b, 0, 0, 0, 0, 0) // unnamed portal, no row limit
	b = fixLengthFrom(b, start)

	return append(b, 'H', 0, 0, 0, 4)
}

func appendMessageHeader(b []byte, typ byte) []byte { return append(b, typ, 0, 0, 0, 0) }

func appendCString(b []byte, s string) []byte { return append(append(b, s...), 0) }

func fixLength(b []byte) []byte { return fixLengthFrom(b, 0) }

func fixLengthFrom(b []byte, start int) []byte {
	n := uint32(len(b) - start - 1)
	b[start+1], b[start+2], b[start+3], b[start+4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return b
}

// injection is a raising statement sent in place of a refused
// extended-protocol message. epoch is the number of ReadyForQuery messages
// that precede its responses.
type injection struct {
	epoch   int64
	code    string
	message string
	// simple: the injection is a Query, answered by our ErrorResponse
	// alone (no ParseComplete or BindComplete to remove).
	simple bool
}

// refusals removes the ParseComplete and BindComplete of injected
// statements from the server's stream, and the server context from their
// ErrorResponse. The server answers an extended-protocol injection with
// exactly ParseComplete, BindComplete, ErrorResponse (ours), or with nothing
// when it is already skipping to Sync; a Query injection with ErrorResponse
// (ours) and ReadyForQuery.
type refusals struct {
	pending atomic.Int32 // fast path: no lock while nothing is pending
	holding atomic.Bool  // held bytes exist: every message must pass filter to keep order
	mu      sync.Mutex
	queue   []injection
	held    []byte // ParseComplete / BindComplete held back, maybe ours
}

func (q *refusals) add(in injection) {
	q.mu.Lock()
	q.queue = append(q.queue, in)
	q.mu.Unlock()
	q.pending.Add(1)
}

// filter decides about one server message given the number of
// ReadyForQuery messages seen so far. pass reports whether the message goes
// on to the Observer; the client gets v.prefix and, unless v.drop, the
// message. Held messages are released in v.prefix when they turn out to be
// the application's own; our ErrorResponse reaches the client in v.prefix,
// without server context, in place of the message.
func (q *refusals) filter(typ byte, body []byte, epoch int64) (v verdict, pass bool) {
	if q.pending.Load() == 0 {
		return verdict{}, true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 || q.queue[0].epoch != epoch {
		return verdict{}, true
	}
	if q.queue[0].simple {
		v.prefix = q.release()
		if typ == 'E' && q.matches(body) {
			q.queue = q.queue[1:]
			q.pending.Add(-1)
			return verdict{prefix: append(v.prefix, withoutServerContext(body)...), drop: true}, true
		}
		return v, true
	}
	switch {
	case typ == '1' && len(q.held) == 0, typ == '2' && len(q.held) == 5:
		q.hold(typ)
		return verdict{drop: true}, false
	case typ == 'E' && len(q.held) == 10 && q.matches(body):
		q.release()
		q.queue = q.queue[1:]
		q.pending.Add(-1)
		return verdict{prefix: withoutServerContext(body), drop: true}, true
	}
	v.prefix = q.release()
	if typ == '1' {
		q.hold(typ)
		return verdict{prefix: v.prefix, drop: true}, false
	}
	return v, true
}

func (q *refusals) hold(typ byte) {
	q.held = append(q.held, typ, 0, 0, 0, 4)
	q.holding.Store(true)
}

// release returns the held messages (a copy) and holds nothing more.
func (q *refusals) release() []byte {
	out := append([]byte(nil), q.held...)
	q.held = q.held[:0]
	q.holding.Store(false)
	return out
}

func (q *refusals) matches(body []byte) bool {
	in := q.queue[0]
	return errorField(body, 'C') == in.code && errorField(body, 'M') == in.message
}

// expire forgets injections whose batch has ended (the server was already
// skipping to Sync and never ran them).
func (q *refusals) expire(epoch int64) {
	if q.pending.Load() == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) > 0 && q.queue[0].epoch < epoch {
		q.queue = q.queue[1:]
		q.pending.Add(-1)
	}
}

// withoutServerContext is the ErrorResponse message with body's fields
// except those that say where in the server the error was raised: W
// (Where), F (File), L (Line) and R (Routine). For an injected refusal they
// name the DO block and PL/pgSQL's source, not anything the application
// ran. Fields are kept in their order; a field without its terminator ends
// the copy.
func withoutServerContext(body []byte) []byte {
	out := appendMessageHeader(make([]byte, 0, headerLen+len(body)), 'E')
	for len(body) > 0 && body[0] != 0 {
		end := bytes.IndexByte(body, 0)
		if end < 0 {
			break
		}
		switch body[0] {
		case 'W', 'F', 'L', 'R':
		default:
			out = append(out, body[:end+1]...)
		}
		body = body[end+1:]
	}
	return fixLength(append(out, 0))
}

// errorField returns one field of an ErrorResponse body.
func errorField(body []byte, field byte) string {
	for len(body) > 1 && body[0] != 0 {
		f := body[0]
		end := 1
		for end < len(body) && body[end] != 0 {
			end++
		}
		if f == field {
			return string(body[1:end])
		}
		if end >= len(body) {
			break
		}
		body = body[end+1:]
	}
	return ""
}
