package pinecone

import "net/http"

// Hook is how write capture plugs into the relay, as Rewrite and
// ModifyResponse plug into httputil.ReverseProxy. The relay calls it once
// per request, from the request's own goroutine; a nil Hook relays
// everything untouched.
type Hook interface {
	// Request is called after routing and the size limit, before anything
	// is sent upstream. body is the whole request body; the relay
	// forwards body, not r.Body. body is valid only until Request
	// returns: its buffer serves another request once this one is done,
	// so anything kept from it must be a copy. A non-nil error refuses the request:
	// nothing is forwarded and the client gets the error in its
	// protocol's shape (a *Status chooses the code and message; any other
	// error is INTERNAL). A non-nil Call follows the request to its end.
	Request(ix *Index, r *http.Request, body []byte) (Call, error)
}

// Call is what a Hook follows of one forwarded request: exactly one of
// its methods is called, once.
type Call interface {
	// Response is called with the upstream's response before its body is
	// copied to the client. For gRPC the call's status arrives in
	// resp.Trailer only after resp.Body is read to its end, so a Call
	// that needs it wraps resp.Body. An error replaces the response with
	// that error's shape.
	Response(resp *http.Response) error

	// Unreachable is called when the request could not be relayed (the
	// upstream cannot be reached, or the exchange broke before a response
	// arrived); the client is answered UNAVAILABLE.
	Unreachable(err error)
}
