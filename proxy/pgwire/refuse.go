package pgwire

import (
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
//     reports as SQLSTATE 57014 with the refusal's message.
//
// Messages after a refused one are forwarded as usual; the server discards
// them until Sync as it does after any error.

// refusalDefaultCode is used when a Refusal carries no valid SQLSTATE.
const refusalDefaultCode = "LT000"

func (ss *session) refuse(typ byte, r *Refusal) verdict {
	r = normalizeRefusal(r)
	ss.log.Info("statement refused", "code", r.Code, "reason", r.Message)
	switch typ {
	case 'Q':
		return verdict{prefix: fixLength(appendCString(appendMessageHeader(nil, 'Q'), raiseStatement(r))), drop: true}
	case 'P', 'B', 'E':
		ss.refusals.add(injection{epoch: ss.sent.Load(), code: r.Code, message: r.Message})
		return verdict{prefix: raiseExtended(r), drop: true}
	case 'd', 'c':
		return verdict{prefix: fixLength(appendCString(appendMessageHeader(nil, 'f'), r.Message)), drop: true}
	}
	ss.log.Warn("observer refused a message that cannot be refused; forwarding it", "type", string(typ))
	return verdict{}
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

func validSQLState(code string) bool {
	if len(code) != 5 {
		return false
	}
	for _, c := range code {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// raiseStatement is a DO block raising r. Every text is dollar-quoted with a
// tag that does not occur in it, so no content can escape the literal.
func raiseStatement(r *Refusal) string {
	var b strings.Builder
	outer := quoteTag("lethe_do", r.Code+r.Message+r.Detail+r.Hint)
	b.WriteString("DO " + outer + "BEGIN RAISE EXCEPTION USING ERRCODE = '" + r.Code + "'")
	for _, f := range []struct{ name, value string }{{"MESSAGE", r.Message}, {"DETAIL", r.Detail}, {"HINT", r.Hint}} {
		if f.value == "" {
			continue
		}
		tag := quoteTag("lethe_s", f.value+outer)
		b.WriteString(", " + f.name + " = " + tag + f.value + tag)
	}
	b.WriteString("; END " + outer)
	return b.String()
}

// quoteTag returns a dollar-quote tag, based on base, that is absent from text.
func quoteTag(base, text string) string {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("$%s%d$", base, i)
		if !strings.Contains(text, tag) {
			return tag
		}
	}
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
}

// refusals removes the ParseComplete and BindComplete of injected
// statements from the server's stream. The server answers an injection with
// exactly ParseComplete, BindComplete, ErrorResponse (ours), or with nothing
// when it is already skipping to Sync.
type refusals struct {
	pending atomic.Int32 // fast path: no lock while nothing is pending
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
// on (after v.prefix); held messages are released in v.prefix when they turn
// out to be the application's own.
func (q *refusals) filter(typ byte, body []byte, epoch int64) (v verdict, pass bool) {
	if q.pending.Load() == 0 {
		return verdict{}, true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 || q.queue[0].epoch != epoch {
		return verdict{}, true
	}
	switch {
	case typ == '1' && len(q.held) == 0, typ == '2' && len(q.held) == 5:
		q.held = append(q.held, typ, 0, 0, 0, 4)
		return verdict{drop: true}, false
	case typ == 'E' && len(q.held) == 10 && q.matches(body):
		q.held = q.held[:0]
		q.queue = q.queue[1:]
		q.pending.Add(-1)
		return verdict{}, true
	}
	v.prefix = append([]byte(nil), q.held...)
	q.held = q.held[:0]
	if typ == '1' {
		q.held = append(q.held, typ, 0, 0, 0, 4)
		return verdict{prefix: v.prefix, drop: true}, false
	}
	return v, true
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
	q.held = q.held[:0]
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
