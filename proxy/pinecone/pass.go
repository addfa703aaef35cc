package pinecone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// wants reports whether the Hook needs to see r, a request with a body:
// never with a nil Hook, always with a Hook that is not a Screener.
func (p *Relay) wants(ix *Index, r *http.Request) bool {
	if p.hook == nil {
		return false
	}
	s, ok := p.hook.(Screener)
	return !ok || s.Wants(ix, r)
}

// servePassing relays a request the Hook has no use for (Screener) as a
// plain reverse proxy does: the upstream transport reads its body straight
// from the client, through a passBody that enforces the size limit and
// the body timeout and nothing else. No buffer is taken from the budget,
// no goroutine reads beside the transport, and nothing is held back.
func (p *Relay) servePassing(w http.ResponseWriter, r *http.Request, ix *Index) {
	if r.ContentLength > p.max {
		st := p.tooLarge(ix, r)
		drain(r)
		writeStatus(w, r, st)
		return
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(p.bodyTimeout))
	body := &passBody{relay: p, index: ix, request: r, client: r.Body, controller: rc}
	up := r.WithContext(context.WithValue(r.Context(), passKey{}, body))
	up.Body = body
	p.proxies[ix].ServeHTTP(w, up)
	if st := body.refused(); st != nil && st.Code == CodeResourceExhausted && r.ProtoMajor == 1 {
		// As for a held body over the limit: the client's connection
		// stays usable, and an HTTP/1.1 client still sending reads the
		// answer instead of a reset.
		drain(r)
	}
}

// passBody is the body of a request relayed by servePassing, as the
// upstream transport reads it. Past the limit, past the body timeout, or
// when the client's body breaks, Read fails, so that the transport cuts
// the upstream request short (it never has the body whole), and the
// refusal is what the ErrorHandler answers. Only the transport reads it,
// from one goroutine; refused is safe from any.
type passBody struct {
	relay      *Relay
	index      *Index
	request    *http.Request
	client     io.ReadCloser
	controller *http.ResponseController
	read       int64

	mu      sync.Mutex
	refusal *Status
}

// passKey carries a passBody in the upstream request's context to the
// ErrorHandler.
type passKey struct{}

// errPassRefused is what the upstream transport reads from a passBody it
// may not forward whole.
var errPassRefused = errors.New("lethe-proxy: the request body was refused")

func (b *passBody) Read(buf []byte) (int, error) {
	if st := b.refused(); st != nil {
		return 0, errPassRefused
	}
	limit := b.relay.max
	if room := limit - b.read + 1; int64(len(buf)) > room { // one byte over the limit tells it is over
		buf = buf[:room]
	}
	n, err := b.client.Read(buf)
	b.read += int64(n)
	switch {
	case b.read > limit:
		b.refuse(b.relay.tooLarge(b.index, b.request))
		return 0, errPassRefused
	case err == io.EOF:
		// Cleared at once, as for a held body: an HTTP/1.1 server's
		// background read of a connection past its deadline would cancel
		// the request.
		b.controller.SetReadDeadline(time.Time{})
		return n, err
	case err == nil:
		return n, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.refuse(b.relay.tooSlow(b.index))
	case b.request.Context().Err() == nil:
		b.refuse(&Status{Code: CodeInvalidArgument, Message: fmt.Sprintf("lethe-proxy: cannot read the request body: %v", err)})
	}
	return n, err
}

// Close does nothing: the server closes the client's body once the
// handler returns (and ReverseProxy never passes Close on).
func (b *passBody) Close() error { return nil }

func (b *passBody) refuse(st *Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refusal == nil {
		b.refusal = st
	}
}

// refused is the status the request is answered with instead of the
// upstream's answer, if its body was refused.
func (b *passBody) refused() *Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refusal
}

// passRefusal is the refusal of r's passBody, if r was relayed by
// servePassing and its body refused.
func passRefusal(r *http.Request) *Status {
	if b, ok := r.Context().Value(passKey{}).(*passBody); ok {
		return b.refused()
	}
	return nil
}
