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
//     even by a streaming decoder. A body whose first line ends before its
//     last byte may be NDJSON (the records API), whose every line is a
//     value, so the hold starts no later than the last non-whitespace
//     byte of its first line. A body that does not start with { [ or "
//     (a bare number parses without its last digit) is held whole.
//
// It is fed the body as it grows and answers in time linear in the bytes
// that arrived.
type tailHold struct {
	grpc bool
	// gRPC: where the first message ends (5 + its declared length), or 0
	// while its prefix has not arrived.
	messageEnd int64
	// JSON: indexes of the first and last non-whitespace bytes so far and
	// of the last one before the first newline after the first (-1: none
	// yet).
	first, last, lineEnd int
}

func newTailHold(grpc bool) tailHold {
	return tailHold{grpc: grpc, first: -1, last: -1, lineEnd: -1}
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
	if h.lineEnd >= 0 {
		return min(h.last, h.lineEnd)
	}
	return h.last
}

// isJSONSpace reports whether c is JSON whitespace (RFC 8259, section 2).
func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
