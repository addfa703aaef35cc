package pinecone

import "bytes"

// tailHold decides how much of a request body that is still arriving may
// go upstream before the Hook has decided on it: everything but a tail
// without which the upstream cannot have a complete request to act on.
//
//   - gRPC: the body is 5-byte-prefixed messages and a unary call has one.
//     The last byte of the first message, and everything after it, are
//     held: a gRPC server decodes a message, and grpc-go calls the
//     handler, only once the message is whole.
//   - REST (JSON): everything from the last non-whitespace byte arrived so
//     far is held, so the closing byte of the value (} ] or ") never goes
//     early, and a JSON value missing its closing byte cannot be parsed,
//     even by a streaming decoder. A streaming decoder also reads values
//     one after another with nothing or any whitespace between them
//     ({"a":1}{"b":2}, {} followed by garbage), so the hold starts no
//     later than the closing byte of the body's first value. A body whose
//     first line ends before its last byte may be NDJSON (the records
//     API), whose every line is a value, so the hold also starts no later
//     than the last non-whitespace byte of its first line (which holds a
//     pretty-printed body whole). A body that does not start with { [ or
//     " (a bare number parses without its last digit) is held whole.
//
// It is fed the body as it grows and answers in time linear in the bytes
// that arrived.
type tailHold struct {
	grpc bool
	// gRPC: where the first message ends (5 + its declared length), or 0
	// while its prefix has not arrived.
	messageEnd int64
	// JSON: indexes of the first and last non-whitespace bytes so far, of
	// the last one before the first newline after the first, and of the
	// closing byte of the first value (-1: none yet).
	first, last, lineEnd, valueEnd int
	// value scans the first value up to its closing byte.
	value firstValue
}

func newTailHold(grpc bool) tailHold {
	return tailHold{grpc: grpc, first: -1, last: -1, lineEnd: -1, valueEnd: -1}
}

// forwardable is how many leading bytes of body may go upstream now;
// body[:prev] is what it was given last time.
func (h *tailHold) forwardable(body []byte, prev int) int {
	if h.grpc {
		open := len(body) - 1
		if h.messageEnd == 0 && len(body) >= 5 {
			h.messageEnd = 5 + int64(uint32(body[1])<<24|uint32(body[2])<<16|uint32(body[3])<<8|uint32(body[4]))
		}
		if h.messageEnd > 0 && h.messageEnd-1 < int64(open) {
			open = int(h.messageEnd - 1)
		}
		return max(open, 0)
	}
	for i := len(body) - 1; i >= prev; i-- {
		if !isJSONSpace(body[i]) {
			h.last = i
			break
		}
	}
	if h.first < 0 {
		for i := prev; i < len(body); i++ {
			if !isJSONSpace(body[i]) {
				h.first = i
				break
			}
		}
		if h.first < 0 {
			return 0
		}
	}
	if c := body[h.first]; c != '{' && c != '[' && c != '"' {
		return 0
	}
	if h.lineEnd < 0 {
		from := max(prev, h.first)
		if nl := bytes.IndexByte(body[from:], '\n'); nl >= 0 {
			end := from + nl - 1
			for isJSONSpace(body[end]) { // stops at h.first at the latest
				end--
			}
			h.lineEnd = end
		}
	}
	if h.valueEnd < 0 {
		h.valueEnd = h.value.end(body, h.first)
	}
	open := h.last
	if h.lineEnd >= 0 {
		open = min(open, h.lineEnd)
	}
	if h.valueEnd >= 0 {
		open = min(open, h.valueEnd)
	}
	return open
}

// firstValue finds the closing byte of a body's first JSON value, which
// starts with { [ or ", as the body grows: it counts brackets outside
// strings, and a string ends at a quote preceded by an even number of
// backslashes. It does not validate: on a body that is not JSON it may
// stop early, which only holds more back, and a decoder reads no value
// from such a body anyway. Runs of bytes between quotes that cannot bring
// the depth to zero are counted, not walked, so a vector's values cost
// little more than a memchr.
type firstValue struct {
	next   int // the next byte to scan; 0 before the first call
	depth  int
	quoted bool // inside a string
}

// end scans body from where the last call stopped and returns the index of
// the first value's closing byte, or -1 if it has not arrived; first is
// the index of the value's first byte.
func (v *firstValue) end(body []byte, first int) int {
	v.next = max(v.next, first)
	for v.next < len(body) {
		if v.quoted {
			q := bytes.IndexByte(body[v.next:], '"')
			if q < 0 {
				v.next = len(body)
				return -1
			}
			q += v.next
			v.next = q + 1
			if escapes(body, q)%2 == 1 {
				continue
			}
			v.quoted = false
			if v.depth == 0 { // a top-level string closed
				return q
			}
			continue
		}
		span := body[v.next:]
		if q := bytes.IndexByte(span, '"'); q >= 0 {
			span = span[:q]
		}
		if closers := bytes.Count(span, []byte{'}'}) + bytes.Count(span, []byte{']'}); closers < v.depth {
			// The depth stays above zero through span.
			v.depth += bytes.Count(span, []byte{'{'}) + bytes.Count(span, []byte{'['}) - closers
		} else {
			for i, c := range span {
				switch c {
				case '{', '[':
					v.depth++
				case '}', ']':
					if v.depth--; v.depth <= 0 {
						v.next += i + 1
						return v.next - 1
					}
				}
			}
		}
		v.next += len(span)
		if v.next < len(body) { // at a quote
			v.quoted = true
			v.next++
		}
	}
	return -1
}

// escapes is how many backslashes precede body[q].
func escapes(body []byte, q int) int {
	n := 0
	for q-n > 0 && body[q-n-1] == '\\' {
		n++
	}
	return n
}

// isJSONSpace reports whether c is JSON whitespace (RFC 8259, section 2).
func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
