package pinecone

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxBufferedBytes bounds the request bodies the relay holds in
// memory at once when Config leaves it out.
const DefaultMaxBufferedBytes = 256 << 20

// defaultBufferWait is how long a request waits for room in the budget.
const defaultBufferWait = 30 * time.Second

// bodyBudget is the memory all request bodies being read or relayed may
// take: a body is charged before its bytes are read, in the steps its
// buffer grows, and released when its request is done. So a client that
// sends slowly, or many clients at once, make others wait instead of
// growing the proxy's memory.
type bodyBudget struct {
	sem     *semaphore.Weighted
	size    int64
	wait    time.Duration
	charged atomic.Int64
}

func newBodyBudget(size int64, wait time.Duration) *bodyBudget {
	if size <= 0 {
		size = DefaultMaxBufferedBytes
	}
	if wait <= 0 {
		wait = defaultBufferWait
	}
	return &bodyBudget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// BufferedBytes is the memory request bodies hold now (a metric).
func (p *Relay) BufferedBytes() int64 { return p.bodies.charged.Load() }

// errBudget is a request that waited too long for room in the budget.
var errBudget = errors.New("request bodies in memory are at pinecone.max_buffered_size")

// readBody reads r's whole body, charged to the budget, refusing one over
// the limit; release returns its charge and must be called once the
// request is done. An oversized body is read on and discarded (up to
// drainLimit, into no buffer) so that an HTTP/1.1 client can send its
// next request on the same connection.
func (p *Relay) readBody(r *http.Request, ix *Index) (body []byte, release func(), st *Status) {
	var charged int64
	release = func() {
		if charged > 0 {
			p.bodies.sem.Release(charged)
			p.bodies.charged.Add(-charged)
			charged = 0
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, release, nil
	}
	tooLarge := func() *Status {
		release()
		io.CopyN(io.Discard, r.Body, drainLimit)
		p.log.Warn("pinecone request body over the limit", "index", ix.Name, "limit_bytes", p.max, "content_length", r.ContentLength)
		return &Status{Code: CodeResourceExhausted, Message: fmt.Sprintf(
			"lethe-proxy: request body is larger than %d bytes, the proxy's limit (pinecone.max_request_size); send fewer vectors per request", p.max)}
	}
	if r.ContentLength > p.max {
		return nil, release, tooLarge()
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.bodies.wait)
	defer cancel()
	buf := []byte(nil)
	want := p.bodySizeHint(r)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > p.max {
				return nil, release, tooLarge()
			}
			grow := want - int64(cap(buf))
			if grow <= 0 { // the hint was short: double
				grow = max(int64(cap(buf)), 32<<10)
			}
			grow = min(grow, p.max+1-int64(cap(buf)))
			if err := p.bodies.sem.Acquire(ctx, grow); err != nil {
				release()
				if r.Context().Err() != nil {
					return nil, release, &Status{Code: CodeUnavailable, Message: "lethe-proxy: the client went away"}
				}
				p.log.Warn("pinecone request waited too long for memory to read its body", "index", ix.Name,
					"max_buffered_bytes", p.bodies.size, "waited", p.bodies.wait)
				return nil, release, &Status{Code: CodeUnavailable, Message: fmt.Sprintf(
					"lethe-proxy: %v (%d bytes) for %v; retry, or raise the limit", errBudget, p.bodies.size, p.bodies.wait)}
			}
			charged += grow
			p.bodies.charged.Add(grow)
			grown := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, release, nil
		}
		if err != nil {
			release()
			return nil, release, &Status{Code: CodeInvalidArgument, Message: fmt.Sprintf("lethe-proxy: cannot read the request body: %v", err)}
		}
	}
}

// bodySizeHint is the buffer to read r's body into, so that a large
// upsert is read into one allocation: its Content-Length when the client
// sent one (REST), else for gRPC (which sends none) the length its first
// message's 5-byte prefix declares, which is then put back in front of
// r.Body. The extra byte lets the read that finds the end of the body
// find it without growing the buffer.
func (p *Relay) bodySizeHint(r *http.Request) int64 {
	const fallback = 32 << 10
	switch {
	case r.ContentLength > 0:
		return min(r.ContentLength, p.max) + 1
	case !IsGRPC(r):
		return fallback
	}
	var prefix [5]byte
	n, err := io.ReadFull(r.Body, prefix[:])
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix[:n]), r.Body), r.Body}
	if err != nil {
		return fallback
	}
	declared := int64(binary.BigEndian.Uint32(prefix[1:]))
	return min(5+declared, p.max) + 1
}
