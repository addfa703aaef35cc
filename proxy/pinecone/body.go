package pinecone

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxBufferedBytes bounds the request bodies the relay holds in
// memory at once when Config leaves it out.
const DefaultMaxBufferedBytes = 256 << 20

// defaultBufferWait is how long a request waits for room in the budget.
const defaultBufferWait = 30 * time.Second

// DefaultBodyTimeout bounds how long a request body may take to arrive
// when Config leaves it out: 4 MiB over a 1 Mbit/s link takes about 35 s.
const DefaultBodyTimeout = 60 * time.Second

// bodyBudget is the memory all request bodies being read or relayed may
// take: a body is charged in the steps its buffer grows, each step at most
// doubling what has arrived (the first is 4 KiB), whatever the body
// declares, and released when its request is done. So clients that
// declare large bodies and send nothing hold almost nothing, while many
// clients sending at once make others wait instead of growing the proxy's
// memory; a body that does not arrive within the body timeout is answered
// DEADLINE_EXCEEDED and returns its share.
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

// requestBody is a request's body read whole into a pooled buffer charged
// to the budget. Release returns both once the request is done; the
// upstream's copy of the body (Reader) reads nothing after that, so a
// transport still sending it cannot see the buffer's next user.
type requestBody struct {
	bytes   []byte
	charged int64
	relay   *Relay
	mu      sync.Mutex // guards released against Reader's reads
	done    bool
}

// Reader is the body for the upstream request.
func (b *requestBody) Reader() io.ReadCloser { return &bodyReader{body: b} }

// Release returns the buffer to its pool and its charge to the budget.
func (b *requestBody) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	putBuffer(b.bytes)
	b.bytes = nil
	if b.charged > 0 {
		b.relay.bodies.sem.Release(b.charged)
		b.relay.bodies.charged.Add(-b.charged)
		b.charged = 0
	}
}

type bodyReader struct {
	body *requestBody
	off  int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.body.mu.Lock()
	defer r.body.mu.Unlock()
	if r.body.done {
		return 0, errBodyReleased
	}
	if r.off >= len(r.body.bytes) {
		return 0, io.EOF
	}
	n := copy(p, r.body.bytes[r.off:])
	r.off += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

var errBodyReleased = errors.New("lethe-proxy: the request is over")

// readBody reads r's whole body into a buffer charged to the budget,
// refusing one over the limit; the caller releases it once the request is
// done (nil when r has no body). An oversized body is read on and
// discarded (up to drainLimit, into no buffer) so that an HTTP/1.1 client
// can send its next request on the same connection. The body must arrive
// within the body timeout (a read deadline on the request, cleared once it
// is read; kept on a refused one); a slower one is answered
// DEADLINE_EXCEEDED.
func (p *Relay) readBody(w http.ResponseWriter, r *http.Request, ix *Index) (*requestBody, *Status) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(p.bodyTimeout))
	b := &requestBody{relay: p}
	tooLarge := func() *Status {
		b.Release()
		io.CopyN(io.Discard, r.Body, drainLimit)
		p.log.Warn("pinecone request body over the limit", "index", ix.Name, "limit_bytes", p.max, "content_length", r.ContentLength)
		return &Status{Code: CodeResourceExhausted, Message: fmt.Sprintf(
			"lethe-proxy: request body is larger than %d bytes, the proxy's limit (pinecone.max_request_size); send fewer vectors per request", p.max)}
	}
	if r.ContentLength > p.max {
		return nil, tooLarge()
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.bodies.wait)
	defer cancel()
	want := p.bodySizeHint(r)
	limit := int(p.max + 1) // reading that many bytes is reading too many
	for {
		if room := min(cap(b.bytes), limit); len(b.bytes) == room {
			if len(b.bytes) == limit {
				return nil, tooLarge()
			}
			// Twice what has arrived, up to the declared size while
			// the body is within it: a buffer, and its charge, grow
			// with the bytes that came, not with what was declared.
			arrived := int64(len(b.bytes))
			size := max(2*arrived, 1<<minBufferShift)
			if arrived < want {
				size = min(size, want)
			}
			size = bufferSize(min(size, p.max+1))
			grow := size - int64(cap(b.bytes))
			if err := p.bodies.sem.Acquire(ctx, grow); err != nil {
				b.Release()
				if r.Context().Err() != nil {
					return nil, &Status{Code: CodeUnavailable, Message: "lethe-proxy: the client went away"}
				}
				p.log.Warn("pinecone request waited too long for memory to read its body", "index", ix.Name,
					"max_buffered_bytes", p.bodies.size, "waited", p.bodies.wait)
				return nil, &Status{Code: CodeUnavailable, Message: fmt.Sprintf(
					"lethe-proxy: %v (%d bytes) for %v; retry, or raise the limit", errBudget, p.bodies.size, p.bodies.wait)}
			}
			b.charged += grow
			p.bodies.charged.Add(grow)
			grown := getBuffer(size)[:len(b.bytes)]
			copy(grown, b.bytes)
			putBuffer(b.bytes)
			b.bytes = grown
		}
		n, err := r.Body.Read(b.bytes[len(b.bytes):min(cap(b.bytes), limit)])
		b.bytes = b.bytes[:len(b.bytes)+n]
		if err == io.EOF {
			// Cleared before forwarding: an HTTP/1.1 server's background
			// read of a connection past its deadline would cancel the
			// request. A refused body keeps it, so that the server's
			// discarding of the rest of it ends too.
			rc.SetReadDeadline(time.Time{})
			return b, nil
		}
		if err != nil {
			b.Release()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.log.Warn("pinecone request body did not arrive in time", "index", ix.Name, "body_timeout", p.bodyTimeout)
				return nil, &Status{Code: CodeDeadlineExceeded, Message: fmt.Sprintf(
					"lethe-proxy: the request body did not arrive within %v (pinecone.body_timeout); send it at once, or raise the timeout", p.bodyTimeout)}
			}
			return nil, &Status{Code: CodeInvalidArgument, Message: fmt.Sprintf("lethe-proxy: cannot read the request body: %v", err)}
		}
	}
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

// bodySizeHint is the size r's body declares, which its buffer grows to
// as it arrives and not past while the body is within it: its
// Content-Length when the client sent one (REST), else for gRPC (which
// sends none) the length its first message's 5-byte prefix declares,
// which is then put back in front of r.Body. The extra byte lets the read
// that finds the end of the body find it without growing the buffer.
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
