package pinecone

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"os"
	"sync"
	"time"
)

// DefaultBodyTimeout bounds how long a request body may take to arrive
// when Config leaves it out: 4 MiB over a 1 Mbit/s link takes about 35 s.
const DefaultBodyTimeout = 60 * time.Second

// declaredJump: a body's buffer grows to the size the body declares once
// 1/declaredJump of it has arrived.
const declaredJump = 8

// readBody reads ex's body into its gatedBody, letting the tailHold's share
// of it go upstream as it arrives, up to the limit and within the body
// timeout, charging the budget as the buffer grows; it returns the status
// to answer if the body cannot be taken whole, and whether the rest of it
// should be read and discarded (an oversized body, so that an HTTP/1.1
// client can send its next request on the same connection). The read
// deadline is cleared once the body is whole and kept on a refused one.
func (p *Relay) readBody(ex *exchange) (st *Status, drain bool) {
	r, ix, g := ex.request, ex.index, ex.body
	rc := http.NewResponseController(ex.response)
	ctx, cancel := context.WithTimeout(ex.fillContext, p.bodies.wait)
	defer cancel()
	want, declared := p.bodySizeHint(ex)
	limit := int(p.max + 1)       // reading that many bytes is reading too many
	most := bufferSize(p.max + 1) // the budget's bodyShare.most
	if declared {
		most = bufferSize(min(want, p.max+1))
	}
	pending := ex.prefix[:ex.prefixN]
	for {
		if room := min(cap(g.buf), limit); len(g.buf) == room {
			if len(g.buf) == limit {
				return p.tooLarge(ix, r), true
			}
			// Twice what has arrived, up to the declared size while
			// the body is within it, and the declared size at once
			// when an eighth of it has come: a buffer, and its charge,
			// grow with the bytes that came, not with what was
			// declared, and a large body is not copied at every
			// doubling.
			arrived := int64(len(g.buf))
			size := max(2*arrived, 1<<minBufferShift)
			if arrived < want {
				size = min(size, want)
				if arrived >= want/declaredJump {
					size = want
				}
			}
			size = bufferSize(min(size, p.max+1))
			grow := size - int64(cap(g.buf))
			if err := p.bodies.acquire(ctx, &g.share, grow, most); err != nil {
				if ex.fillContext.Err() != nil {
					return &Status{Code: CodeUnavailable, Message: "lethe-proxy: the client went away, or the upstream answered first"}, false
				}
				p.log.Warn("pinecone request waited too long for memory to read its body", "index", ix.Name,
					"max_buffered_bytes", p.bodies.size, "waited", p.bodies.wait)
				// Drained, as an oversized body is: an HTTP/1.1 client
				// still sending reads the answer only once it has sent
				// all, and a connection closed under it is reset.
				return &Status{Code: CodeUnavailable, Message: fmt.Sprintf(
					"lethe-proxy: %v (%d bytes) for %v; retry, or raise the limit", errBudget, p.bodies.size, p.bodies.wait)}, true
			}
			g.grow(size)
		}
		var n int
		var err error
		if len(pending) > 0 { // the gRPC prefix the handler read
			n = copy(g.room(limit), pending)
			pending = pending[n:]
		} else {
			n, err = r.Body.Read(g.room(limit))
		}
		prev := len(g.buf)
		g.arrived(n, ex.hold.forwardable(g.buf[:prev+n], prev))
		if err == io.EOF {
			// Cleared before the request goes on: an HTTP/1.1
			// server's background read of a connection past its
			// deadline would cancel the request. A refused body keeps
			// it, so that the server's discarding of the rest of it
			// ends too.
			rc.SetReadDeadline(time.Time{})
			return nil, false
		}
		if err != nil {
			if ex.isOver() {
				return &Status{Code: CodeUnavailable, Message: "lethe-proxy: the upstream answered before the request body was whole"}, false
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return p.tooSlow(ix), false
			}
			return &Status{Code: CodeInvalidArgument, Message: fmt.Sprintf("lethe-proxy: cannot read the request body: %v", err)}, false
		}
	}
}

// tooLarge is the answer to a body over the limit.
func (p *Relay) tooLarge(ix *Index, r *http.Request) *Status {
	p.log.Warn("pinecone request body over the limit", "index", ix.Name, "limit_bytes", p.max, "content_length", r.ContentLength)
	return &Status{Code: CodeResourceExhausted, Message: fmt.Sprintf(
		"lethe-proxy: request body is larger than %d bytes, the proxy's limit (pinecone.max_request_size); send fewer vectors per request", p.max)}
}

// tooSlow is the answer to a body that did not arrive within the body
// timeout.
func (p *Relay) tooSlow(ix *Index) *Status {
	p.log.Warn("pinecone request body did not arrive in time", "index", ix.Name, "body_timeout", p.bodyTimeout)
	return &Status{Code: CodeDeadlineExceeded, Message: fmt.Sprintf(
		"lethe-proxy: the request body did not arrive within %v (pinecone.body_timeout); send it at once, or raise the timeout", p.bodyTimeout)}
}

// drain reads and discards the rest of an oversized body, up to
// drainLimit and into no buffer, so that an HTTP/1.1 client's connection
// stays usable.
func drain(r *http.Request) {
	io.CopyN(io.Discard, r.Body, drainLimit)
}

// Body buffers are pooled by power-of-two size from 4 KiB to 64 MiB, so
// that relaying a stream of upserts does not allocate (and zero) a
// megabyte or more per request; larger ones are allocated each time.
const (
	minBufferShift = 12
	maxBufferShift = 26
)

var bufferPools [maxBufferShift + 1]sync.Pool

// bufferSize is the capacity a body of n bytes is read into.
func bufferSize(n int64) int64 {
	shift := max(bits.Len64(uint64(n-1)), minBufferShift)
	if shift > maxBufferShift {
		return n
	}
	return 1 << shift
}

// getBuffer returns an empty buffer of capacity size (from bufferSize).
func getBuffer(size int64) []byte {
	shift := bits.Len64(uint64(size - 1))
	if shift <= maxBufferShift && size == 1<<shift {
		if b, ok := bufferPools[shift].Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, size)
}

// copyBuffers lends the ReverseProxy the buffers it copies responses
// through, from the body pools, instead of allocating 32 KiB a response.
type copyBuffers struct{}

const copyBufferSize = 32 << 10

func (copyBuffers) Get() []byte  { return getBuffer(copyBufferSize)[:copyBufferSize] }
func (copyBuffers) Put(b []byte) { putBuffer(b) }

// putBuffer returns b, which nothing uses any more, to its pool.
func putBuffer(b []byte) {
	size := cap(b)
	shift := bits.Len64(uint64(size - 1))
	if size == 0 || shift < minBufferShift || shift > maxBufferShift || size != 1<<shift {
		return
	}
	b = b[:0]
	bufferPools[shift].Put(&b)
}

// bodySizeHint is the size ex's body declares, which its buffer grows to
// as it arrives and not past while the body is within it: its
// Content-Length when the client sent one (REST), else for gRPC (which
// sends none) the length its first message's 5-byte prefix declares. The
// extra byte lets the read that finds the end of the body find it without
// growing the buffer. A body that declares nothing (a chunked REST body)
// gets a first guess, and declared false.
func (p *Relay) bodySizeHint(ex *exchange) (size int64, declared bool) {
	const guess = 32 << 10
	switch {
	case ex.request.ContentLength > 0:
		return min(ex.request.ContentLength, p.max) + 1, true
	case ex.prefixN < len(ex.prefix):
		return guess, false
	}
	length := int64(binary.BigEndian.Uint32(ex.prefix[1:]))
	return min(5+length, p.max) + 1, true
}
