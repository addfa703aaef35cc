package pinecone

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"time"
)

// DefaultMaxRequestBytes bounds a request body when Config leaves it out:
// a little above Pinecone's own 2 MB request limit, so that the upstream,
// not the relay, refuses requests between the two with its own message.
const DefaultMaxRequestBytes = 4 << 20

// drainLimit is how much of an oversized HTTP/1.1 body the relay reads and
// discards so that the client's connection stays usable; past it the
// connection is closed instead.
const drainLimit = 64 << 20

// Config configures a Relay.
type Config struct {
	// Indexes are the upstream index hosts; at least one.
	Indexes []*Index
	// MaxRequestBytes bounds one request body (default
	// DefaultMaxRequestBytes); larger ones are answered RESOURCE_EXHAUSTED
	// (gRPC) or 413 (REST) and not forwarded.
	MaxRequestBytes int64
	// MaxBufferedBytes bounds the request bodies held in memory at once,
	// across all connections, counting each by the power-of-two buffer it
	// is read into, which grows with what has arrived, never with what
	// was declared (default DefaultMaxBufferedBytes; at least one buffer
	// for a body of MaxRequestBytes+1). A request whose body would go over
	// it waits for others to finish, at most BufferWait (default 30s),
	// then is answered UNAVAILABLE.
	MaxBufferedBytes int64
	BufferWait       time.Duration
	// BodyTimeout bounds how long a request body may take to arrive
	// (default DefaultBodyTimeout); a slower one is answered
	// DEADLINE_EXCEEDED (gRPC) or 408 (REST), not forwarded, and returns
	// its share of MaxBufferedBytes.
	BodyTimeout time.Duration
	// Hook, if not nil, sees every request and response (see Hook).
	Hook Hook
	// Logger receives the relay's own events; nil discards them. Nothing
	// logged carries request contents.
	Logger *slog.Logger
}

// Relay is an http.Handler that forwards Pinecone data-plane requests to
// their index's upstream host.
type Relay struct {
	indexes     []*Index
	max         int64
	bodyTimeout time.Duration
	bodies      *bodyBudget
	hook        Hook
	log         *slog.Logger
	proxies     map[*Index]*httputil.ReverseProxy
}

// New checks cfg and builds the upstream transports; nothing is dialled
// until the first request.
func New(cfg Config) (*Relay, error) {
	if len(cfg.Indexes) == 0 {
		return nil, errors.New("lethe-proxy: pinecone relay has no index to forward to")
	}
	p := &Relay{indexes: cfg.Indexes, max: cfg.MaxRequestBytes, hook: cfg.Hook, log: cfg.Logger,
		proxies: map[*Index]*httputil.ReverseProxy{}}
	if p.max <= 0 {
		p.max = DefaultMaxRequestBytes
	}
	if p.bodyTimeout = cfg.BodyTimeout; p.bodyTimeout <= 0 {
		p.bodyTimeout = DefaultBodyTimeout
	}
	p.bodies = newBodyBudget(max(cfg.MaxBufferedBytes, bufferSize(p.max+1)), cfg.BufferWait)
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	for _, ix := range cfg.Indexes {
		if err := ix.transports(); err != nil {
			return nil, err
		}
		p.proxies[ix] = p.reverseProxy(ix)
	}
	return p, nil
}

// reverseProxy relays to ix.Upstream: the URL's scheme and host change,
// the path, query and headers do not (SetURL joins an empty upstream path
// with the request's path and raw path as sent).
func (p *Relay) reverseProxy(ix *Index) *httputil.ReverseProxy {
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(ix.Upstream) },
		Transport: ix,
		// FlushInterval stays 0: ReverseProxy flushes every write of a
		// response without Content-Length (every gRPC response carrying
		// a message) by itself. A non-zero interval would also flush the
		// headers of a trailers-only gRPC response (grpc-status in the
		// HEADERS frame that ends the stream, Content-Length 0) before
		// the stream ends, and clients then see no status at all.
		ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.relayFailed(w, r, ix, err)
		},
	}
	if p.hook != nil {
		rp.ModifyResponse = func(resp *http.Response) error {
			call, _ := resp.Request.Context().Value(callKey{}).(Call)
			if call == nil {
				return nil
			}
			if err := call.Response(resp); err != nil {
				return &hookError{err}
			}
			return nil
		}
	}
	return rp
}

// callKey carries a request's Call in its context from Hook.Request to
// ModifyResponse or the ErrorHandler, which see only the request.
type callKey struct{}

// hookError marks a Hook's refusal of a response, so that relayFailed does
// not mistake it for an unreachable upstream.
type hookError struct{ err error }

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

func (p *Relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		p.log.Warn("pinecone request asking for a protocol upgrade refused", "method", r.Method)
		writeStatus(w, r, upgradeRefused)
		return
	}
	ix, st := p.route(r)
	if st != nil {
		p.log.Warn("pinecone request for an unknown host", "host", r.Host)
		writeStatus(w, r, st)
		return
	}
	body, st := p.readBody(w, r, ix)
	if st != nil {
		writeStatus(w, r, st)
		return
	}
	var payload []byte
	if body != nil {
		defer body.Release()
		payload = body.bytes
	}
	if p.hook != nil {
		call, err := p.hook.Request(ix, r, payload)
		if err != nil {
			writeStatus(w, r, asStatus(err))
			return
		}
		if call != nil {
			r = r.WithContext(context.WithValue(r.Context(), callKey{}, call))
		}
	}
	if body != nil {
		r.Body = body.Reader()
	}
	p.proxies[ix].ServeHTTP(w, r)
}

// relayFailed answers a request the upstream did not answer.
func (p *Relay) relayFailed(w http.ResponseWriter, r *http.Request, ix *Index, err error) {
	if he := (*hookError)(nil); errors.As(err, &he) {
		writeStatus(w, r, asStatus(he.err))
		return
	}
	if call, _ := r.Context().Value(callKey{}).(Call); call != nil {
		call.Unreachable(err)
	}
	if r.Context().Err() != nil {
		return // the client went away; nobody to answer
	}
	p.log.Warn("pinecone upstream unreachable", "index", ix.Name, "upstream", ix.Upstream.Host, "err", err)
	writeStatus(w, r, &Status{Code: CodeUnavailable, Message: fmt.Sprintf(
		"lethe-proxy: cannot reach the Pinecone index host %s for index %q: %v; check that it is up and that pinecone.indexes[].host is right",
		ix.Upstream.Host, ix.Name, err)})
}

// asStatus turns a Hook's error into the Status answered to the client.
func asStatus(err error) *Status {
	if st := (*Status)(nil); errors.As(err, &st) {
		return st
	}
	return &Status{Code: CodeInternal, Message: "lethe-proxy: " + err.Error()}
}

// Close drops idle upstream connections.
func (p *Relay) Close() {
	for _, ix := range p.indexes {
		ix.close()
	}
}

// Server returns an http.Server for the relay that speaks HTTP/1.1 and
// HTTP/2: with tlsConf nil, cleartext HTTP/2 with prior knowledge (h2c)
// beside HTTP/1.1; otherwise TLS offering h2 and http/1.1 through ALPN.
// tlsConf is cloned, since the server adds its ALPN protocols to it. Start
// it with Serve.
func (p *Relay) Server(tlsConf *tls.Config) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(tlsConf == nil)
	return &http.Server{
		Handler:           p,
		Protocols:         &protocols,
		TLSConfig:         tlsConf.Clone(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       5 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
}

// Serve serves hs (from Relay.Server) on l, over TLS when hs has a
// TLSConfig, until hs is shut down; it then returns nil.
func Serve(hs *http.Server, l net.Listener) error {
	var err error
	if hs.TLSConfig != nil {
		err = hs.ServeTLS(l, "", "")
	} else {
		err = hs.Serve(l)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
