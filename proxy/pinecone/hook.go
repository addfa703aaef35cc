package pinecone

import "net/http"

// Hook is how write capture plugs into the relay, as Rewrite and
// ModifyResponse plug into httputil.ReverseProxy. The relay calls it once
// per request, from the request's own goroutine; a nil Hook relays
// everything untouched.
type Hook interface {
	// Request is called after routing and the size limit, before anything
	// is sent upstream. r.Body holds the whole request body and may be
	// read; the relay forwards body, not r.Body, so that reading costs
	// nothing. A non-nil error refuses the request: nothing is forwarded
	// and the client gets the error in its protocol's shape (a *Status
	// chooses the code and message; any other error is INTERNAL).
	Request(ix *Index, r *http.Request, body []byte) error

	// Response is called with the upstream's response before its body is
	// copied to the client. For gRPC the call's status arrives in
	// resp.Trailer only after resp.Body is read to its end, so a Hook that
	// needs it wraps resp.Body. An error replaces the response with that
	// error's shape.
	Response(ix *Index, r *http.Request, resp *http.Response) error

	// Unreachable is called when the request could not be relayed (the
	// upstream cannot be reached, or the exchange broke before a response
	// arrived); the client is answered UNAVAILABLE.
	Unreachable(ix *Index, r *http.Request, err error)
}
