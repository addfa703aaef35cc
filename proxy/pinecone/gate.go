package pinecone

import (
	"errors"
	"io"
	"sync"
)

// gatedBody is a request body on its way upstream while it still arrives.
// One goroutine, the filler, reads the client's body into a pooled buffer
// charged to the budget (arrived, grow); the upstream transport reads
// (Read) the part the tailHold lets through; the Hook's decision then
// releases the rest (release) or aborts the body (abort), so that the
// upstream gets either the whole body or an error, never a complete
// request the Hook refused. free returns the buffer and its charge; Read
// answers an error from then on, so a transport still sending the body
// cannot see the buffer's next user.
type gatedBody struct {
	mu   sync.Mutex
	more sync.Cond // on mu: open grew, or the state changed
	// buf is the body so far. Only the filler changes it (under mu), and
	// it writes past len(buf) only, where Read never looks.
	buf    []byte
	open   int // bytes of buf the upstream may read
	sent   int // bytes of buf the upstream has read
	state  gateState
	freed  bool
	share  bodyShare // the filler's, until free
	budget *bodyBudget
}

type gateState uint8

const (
	gateFilling  gateState = iota // arriving: the upstream reads up to open
	gateReleased                  // whole and accepted: the upstream reads to the end
	gateAborted                   // refused, or the exchange is over: Read fails
	gateClosed                    // the transport is done with it: Read fails
)

// errBodyAborted is what the upstream transport reads from a body the
// relay will not send whole; the transport then resets the HTTP/2 stream
// or closes the HTTP/1.1 connection.
var errBodyAborted = errors.New("lethe-proxy: the request was not forwarded whole")

var errBodyReleased = errors.New("lethe-proxy: the request is over")

func newGatedBody(budget *bodyBudget) *gatedBody {
	g := &gatedBody{budget: budget, share: bodyShare{index: -1}}
	g.more.L = &g.mu
	return g
}

// Read implements io.Reader for the upstream transport: it blocks until
// more of the body may go, the body ends, or it is aborted.
func (g *gatedBody) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		switch {
		case g.state == gateAborted:
			return 0, errBodyAborted
		case g.state == gateClosed || g.freed:
			return 0, errBodyReleased
		case g.sent < g.open:
			n := copy(p, g.buf[g.sent:g.open])
			g.sent += n
			return n, nil
		case g.state == gateReleased:
			return 0, io.EOF
		}
		g.more.Wait()
	}
}

// Close implements io.Closer: the transport (or ReverseProxy) is done
// with the body. The filler goes on reading; the buffer stays until free.
func (g *gatedBody) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == gateFilling || g.state == gateReleased {
		g.state = gateClosed
	}
	g.more.Broadcast()
	return nil
}

// room is where the filler reads the client's next bytes: buf past its
// length, up to limit bytes of body in all.
func (g *gatedBody) room(limit int) []byte {
	return g.buf[len(g.buf):min(cap(g.buf), limit)]
}

// grow moves the body into a buffer of capacity size (the filler has
// acquired it from the budget). The copy is made outside mu: only the
// filler writes buf, and Read only reads it.
func (g *gatedBody) grow(size int64) {
	old := g.buf
	grown := getBuffer(size)[:len(old)]
	copy(grown, old)
	g.mu.Lock()
	g.buf = grown
	g.mu.Unlock()
	putBuffer(old)
}

// arrived adds the n bytes read into room to the body and lets the first
// open bytes of it go upstream.
func (g *gatedBody) arrived(n, open int) {
	g.mu.Lock()
	g.buf = g.buf[:len(g.buf)+n]
	if open > g.open {
		g.open = open
		g.more.Broadcast()
	}
	g.mu.Unlock()
}

// bytes is the body so far; the filler's to read.
func (g *gatedBody) bytes() []byte { return g.buf }

// release lets the rest of the body go: it is whole and accepted.
func (g *gatedBody) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == gateFilling {
		g.state = gateReleased
		g.open = len(g.buf)
	}
	g.more.Broadcast()
}

// abort makes the upstream's next Read fail, unless the body was released.
func (g *gatedBody) abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == gateFilling {
		g.state = gateAborted
	}
	g.more.Broadcast()
}

// free returns the buffer to its pool and its charge to the budget; the
// filler must be done with it.
func (g *gatedBody) free() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.freed {
		return
	}
	g.freed = true
	putBuffer(g.buf)
	g.buf = nil
	g.budget.release(&g.share)
	g.more.Broadcast()
}
