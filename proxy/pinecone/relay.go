package pinecone

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"runtime/debug"
	"strings"
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
		BufferPool: copyBuffers{},
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		ex := exchangeOf(resp.Request)
		if ex == nil {
			return nil
		}
		refusal, call, early := ex.settled()
		switch {
		case refusal != nil:
			// The upstream answered a request it never had whole; the
			// client gets the refusal, as when nothing was forwarded.
			return &hookError{refusal}
		case early:
			resp.Body = &earlyAnswer{ReadCloser: resp.Body, body: ex.body}
			return nil
		case call == nil:
			return nil
		}
		if err := call.Response(resp); err != nil {
			return &hookError{err}
		}
		return nil
	}
	return rp
}

// hookError marks a refusal of a response (the Hook's, or the request's
// own refusal when the upstream answered it early), so that relayFailed
// does not mistake it for an unreachable upstream.
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
	if r.Body == nil || r.Body == http.NoBody {
		p.serveWithoutBody(w, r, ix)
		return
	}
	if !p.wants(ix, r) {
		p.servePassing(w, r, ix)
		return
	}
	ex, st := p.startBody(w, r, ix)
	if st != nil {
		writeStatus(w, r, st)
		return
	}
	ex.filler.Add(1)
	defer func() {
		if ex.isOver() {
			// The upstream answered or failed before the body was
			// whole: the rest of it goes nowhere, so the client's answer
			// need not wait for it (an HTTP/1.1 connection is then closed
			// after the answer, as for any unread body).
			ex.stopFill()
			http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		ex.filler.Wait()
		ex.stopFill()
		ex.body.free()
	}()
	if !ex.streams {
		p.fill(ex)
		if refusal, _, _ := ex.settled(); refusal != nil {
			writeStatus(w, r, refusal)
			return
		}
		p.proxies[ix].ServeHTTP(w, ex.upstreamRequest())
		return
	}
	// The filler reads the body and asks the Hook while the ReverseProxy
	// forwards what it lets through; the buffer goes back once both are
	// done, also when the ReverseProxy panics (http.ErrAbortHandler).
	go p.fill(ex)
	p.proxies[ix].ServeHTTP(w, ex.upstreamRequest())
}

// serveWithoutBody relays a request that has no body: the Hook, if any,
// decides before anything is forwarded.
func (p *Relay) serveWithoutBody(w http.ResponseWriter, r *http.Request, ix *Index) {
	if p.hook != nil {
		call, err := p.hook.Request(ix, r, nil)
		if err != nil {
			writeStatus(w, r, asStatus(err))
			return
		}
		if call != nil {
			ex := &exchange{phase: phaseDecided, call: call}
			r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex))
		}
	}
	p.proxies[ix].ServeHTTP(w, r)
}

// startBody prepares the exchange of a request with a body, or answers
// it at once: a Content-Length over the limit is refused before anything
// is forwarded, and the body read on and discarded so that an HTTP/1.1
// client can send its next request on the same connection. The body must
// arrive within the body timeout: a read deadline on the request, cleared
// once the body is whole.
func (p *Relay) startBody(w http.ResponseWriter, r *http.Request, ix *Index) (*exchange, *Status) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(p.bodyTimeout))
	// An HTTP/1.1 server would otherwise read and discard the unread
	// body when a response is written, under the filler, if the upstream
	// answers before the body is whole. HTTP/2 is always full duplex.
	if r.ProtoMajor == 1 {
		rc.EnableFullDuplex()
	}
	if r.ContentLength > p.max {
		st := p.tooLarge(ix, r)
		drain(r)
		return nil, st
	}
	grpc := IsGRPC(r)
	// A body in a Content-Encoding the hold cannot read (brotli has no
	// magic number, so its first byte may look like JSON) is held whole.
	encoded := r.Header.Get("Content-Encoding") != "" && !strings.EqualFold(r.Header.Get("Content-Encoding"), "identity")
	ex := &exchange{relay: p, index: ix, response: w, request: r, body: newGatedBody(p.bodies), hold: newTailHold(grpc), streams: !encoded}
	ex.fillContext, ex.stopFill = context.WithCancel(r.Context())
	if grpc {
		// A read error is met again by the filler, which answers it.
		ex.prefixN, _ = io.ReadFull(r.Body, ex.prefix[:])
		// A first message declared over the limit: the body is refused
		// once that many bytes arrived, or is not what it declares
		// (JSON sent as application/grpc), for the Hook to read. Either
		// way nothing goes upstream before it is whole.
		ex.streams = ex.prefixN < len(ex.prefix) || 5+int64(binary.BigEndian.Uint32(ex.prefix[1:])) <= p.max
	}
	return ex, nil
}

// fill runs on its own goroutine while the ReverseProxy forwards: it reads
// the body whole, then asks the Hook, and releases the body's held tail
// or aborts it. A refusal's status is answered by the ErrorHandler once
// the abort has ended the upstream request.
func (p *Relay) fill(ex *exchange) {
	defer ex.filler.Done()
	defer func() {
		if v := recover(); v != nil {
			// As net/http does for a handler: log, answer, go on serving.
			p.log.Error("pinecone relay: panic while reading a request body or running the hook", "index", ex.index.Name,
				"panic", v, "stack", string(debug.Stack()))
			ex.refuse(&Status{Code: CodeInternal, Message: "lethe-proxy: internal error while reading the request; see the proxy's log"})
		}
	}()
	if st, drainRest := p.readBody(ex); st != nil {
		ex.refuse(st)
		if drainRest {
			drain(ex.request)
		}
		return
	}
	if !ex.decide() {
		return // the upstream answered or failed before it had the whole body: nothing to record
	}
	if p.hook == nil {
		ex.accept(nil)
		return
	}
	call, err := p.hook.Request(ex.index, ex.request, ex.body.bytes())
	if err != nil {
		ex.refuse(asStatus(err))
		return
	}
	ex.accept(call)
}

// relayFailed answers a request the upstream did not answer: with the
// refusal that aborted it, or as unreachable.
func (p *Relay) relayFailed(w http.ResponseWriter, r *http.Request, ix *Index, err error) {
	if he := (*hookError)(nil); errors.As(err, &he) {
		writeStatus(w, r, asStatus(he.err))
		return
	}
	if st := passRefusal(r); st != nil {
		writeStatus(w, r, st)
		return
	}
	if ex := exchangeOf(r); ex != nil {
		refusal, call, _ := ex.settled()
		if refusal != nil {
			writeStatus(w, r, refusal)
			return
		}
		if call != nil {
			call.Unreachable(err)
		}
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
