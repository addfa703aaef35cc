package pinecone

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// exchange is one request with a body, forwarded while it arrives: the
// filler goroutine reads the body into a gatedBody and asks the Hook,
// while the handler's goroutine runs the ReverseProxy, whose
// ModifyResponse and ErrorHandler find the exchange in the upstream
// request's context. An answer (or failure) from the upstream that comes
// while the body is still arriving ends the exchange: the Hook is not
// asked, since the upstream never had the whole request, and nothing is
// settled. One that comes while the Hook is deciding waits for its
// decision (a Hook that made an intent learns what became of it, as an
// upstream refusing a wrong API key before reading the body).
type exchange struct {
	relay    *Relay
	index    *Index
	response http.ResponseWriter
	request  *http.Request // the client's; the filler reads its Body
	body     *gatedBody
	hold     tailHold
	prefix   [5]byte // a gRPC body's first bytes, read before the filler starts
	prefixN  int
	streams  bool // false: the body is read whole before the ReverseProxy starts
	filler   sync.WaitGroup
	// fillContext bounds the filler's waits; stopFill ends them once the
	// upstream has answered or failed.
	fillContext context.Context
	stopFill    context.CancelFunc
	deciding    sync.WaitGroup // while phase is phaseDeciding

	mu      sync.Mutex
	phase   phase
	call    Call    // once decided: nil if there is nothing to follow
	refusal *Status // once decided: answered to the client instead of the upstream's answer
	over    bool    // the upstream answered or failed while the body was arriving
}

type phase uint8

const (
	phaseFilling  phase = iota // the body is arriving
	phaseDeciding              // the Hook is deciding
	phaseDecided               // accepted (call) or refused (refusal)
)

// exchangeKey carries a request's exchange in the upstream request's
// context to ModifyResponse and the ErrorHandler, which see only the
// request; a request without a body carries its Call the same way.
type exchangeKey struct{}

func exchangeOf(r *http.Request) *exchange {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return ex
}

// upstreamRequest is the request the ReverseProxy forwards: the client's,
// with the gated body and the exchange in its context.
func (ex *exchange) upstreamRequest() *http.Request {
	up := ex.request.WithContext(context.WithValue(ex.request.Context(), exchangeKey{}, ex))
	up.Body = ex.body
	return up
}

// decide moves the exchange to the Hook's decision, unless the upstream
// has answered or failed already (decide then reports false: the body is
// left to the transport, see settled).
func (ex *exchange) decide() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.over {
		return false
	}
	ex.phase = phaseDeciding
	ex.deciding.Add(1)
	return true
}

// isOver reports whether the upstream answered or failed while the body
// was still arriving.
func (ex *exchange) isOver() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.over
}

// accept records the Hook's acceptance and releases the body's tail.
func (ex *exchange) accept(call Call) {
	ex.decided(call, nil)
	ex.body.release()
}

// refuse records the status the client is answered with and aborts the
// body, so that the upstream never gets it whole; the buffer goes back
// at once, since the upstream reads nothing more of it. If the upstream
// has answered already, the body is left to the transport (see settled).
func (ex *exchange) refuse(st *Status) {
	if over := ex.decided(nil, st); over {
		return
	}
	ex.body.abort()
	ex.body.free()
}

// decided records the decision, once, and reports whether the upstream
// had answered or failed before it.
func (ex *exchange) decided(call Call, refusal *Status) (over bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.phase == phaseDecided {
		return ex.over
	}
	if ex.phase == phaseDeciding {
		defer ex.deciding.Done()
	}
	ex.phase, ex.call, ex.refusal = phaseDecided, call, refusal
	return ex.over
}

// settled is the upstream's answer or failure arriving. If the Hook is
// deciding, it waits for the decision, and returns the refusal to answer
// instead of the upstream's answer (the failure is then the abort) or the
// Call to settle. If the body is still arriving, it ends the exchange and
// reports early: the body is then not aborted, since an HTTP/2 transport
// that reads an error from a request body before the response body is
// closed breaks the response too; closing an early answer's body aborts
// it (earlyAnswer), and so does free once the handler is done.
func (ex *exchange) settled() (refusal *Status, call Call, early bool) {
	ex.mu.Lock()
	if ex.phase == phaseDeciding {
		ex.mu.Unlock()
		ex.deciding.Wait()
		ex.mu.Lock()
	}
	defer ex.mu.Unlock()
	if ex.phase == phaseFilling {
		ex.over = true
		return nil, nil, true
	}
	return ex.refusal, ex.call, false
}

// earlyAnswer is the body of an answer that came while the request body
// was still arriving. The request body is aborted once the answer's first
// read is relayed (ReverseProxy flushes each read of an answer without a
// Content-Length): an upstream that reads on while it answers ends its
// answer only when its request does, and an HTTP/2 transport that reads
// an error from a request body breaks the answer too, so the abort waits
// until the client has the answer's head. Close aborts too: ReverseProxy
// closes the answer once it is relayed, and an HTTP/2 transport's Close
// waits for the request body's forwarding to end. (ReverseProxy hands the
// transport the request body behind a wrapper whose Close does not reach
// the gatedBody.)
type earlyAnswer struct {
	io.ReadCloser
	body  *gatedBody
	reads int
}

func (e *earlyAnswer) Read(p []byte) (int, error) {
	if e.reads > 0 {
		e.body.abort()
	}
	e.reads++
	return e.ReadCloser.Read(p)
}

func (e *earlyAnswer) Close() error {
	e.body.abort()
	return e.ReadCloser.Close()
}
