package pinecone

import "net/http"

// Hook is how write capture plugs into the relay, as Rewrite and
// ModifyResponse plug into httputil.ReverseProxy. The relay calls it once
// per request; a nil Hook relays everything untouched.
type Hook interface {
	// Request is called after routing and the size limit, once the whole
	// body has arrived, before the upstream can have the request whole:
	// the relay forwards a body as it arrives but holds back its tail
	// (a gRPC message's last byte; the closing byte of a JSON body's first value and
	// all after it) until Request returns. It is called from a
	// goroutine of the relay's, beside the one relaying the request. body
	// is the whole request body; the relay forwards body, not r.Body.
	// body is valid only until Request returns: its buffer serves another
	// request once this one is done, so anything kept from it must be a
	// copy. A non-nil error refuses the request: the upstream request is
	// aborted before its tail (the HTTP/2 stream reset, the HTTP/1.1
	// connection closed), so the upstream never has it whole, and the
	// client gets the error in its protocol's shape (a *Status chooses
	// the code and message; any other error is INTERNAL). A non-nil Call
	// follows the request to its end. If the upstream answers or fails
	// while the body is still arriving, Request is not called: the
	// upstream never had the request whole.
	Request(ix *Index, r *http.Request, body []byte) (Call, error)
}

// Call is what a Hook follows of one forwarded request: exactly one of
// its methods is called, once.
type Call interface {
	// Response is called with the upstream's response before its body is
	// copied to the client (after Request has returned, also when the
	// upstream answers while Request runs). For gRPC the call's status arrives in
	// resp.Trailer only after resp.Body is read to its end, so a Call
	// that needs it wraps resp.Body. An error replaces the response with
	// that error's shape.
	Response(resp *http.Response) error

	// Unreachable is called when the request could not be relayed (the
	// upstream cannot be reached, or the exchange broke before a response
	// arrived); the client is answered UNAVAILABLE.
	Unreachable(err error)
}

// Screener is implemented by a Hook that can tell from a request's
// method, path and headers alone that it has no use for the request: a
// read, or a request to an index it has no rules for. The relay then
// relays such a request as a plain reverse proxy does: its body goes
// from the client to the upstream transport as it arrives, with nothing
// read into memory and nothing held back, and Request is not called. The
// size limit and the body timeout still apply (an over-long or too-slow
// body is cut short upstream and answered as when held). A Hook that
// does not implement Screener sees every request; a nil Hook sees none.
type Screener interface {
	// Wants reports whether the Hook needs to see r. False promises that
	// Request would return (nil, nil) for r whatever its body.
	Wants(ix *Index, r *http.Request) bool
}
