package controlplane

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
)

// DefaultUpstream is Pinecone's control plane.
const DefaultUpstream = "https://api.pinecone.io"

// DefaultMaxAnswerBytes bounds a list or describe answer read for
// rewriting when Config leaves it out: a list indexes answer is about 1 kB
// per index.
const DefaultMaxAnswerBytes = 4 << 20

// Config configures a Relay.
type Config struct {
	// Upstream is the control plane: https://… (TLS) or http://… (Pinecone
	// Local). Its path must be empty.
	Upstream *url.URL
	// RootCAs verifies an https upstream; nil means the system roots.
	RootCAs *x509.CertPool
	// Hosts maps each configured index's name to the data-plane address
	// its SDK clients are given instead of its real host: "host:port"
	// (the SDKs add https://) or "http://host:port" for a cleartext relay.
	Hosts map[string]string
	// UpstreamHosts maps each configured index's name to the host
	// (without scheme) the data relay forwards it to; a control plane
	// naming another is logged (optional).
	UpstreamHosts map[string]string
	// MaxAnswerBytes bounds an answer read for rewriting (default
	// DefaultMaxAnswerBytes); a larger one is refused.
	MaxAnswerBytes int64
	// Logger receives the relay's own events; nil discards them.
	Logger *slog.Logger
}

// Relay is an http.Handler forwarding Pinecone control-plane requests to
// the upstream and rewriting index hosts (see the package comment).
type Relay struct {
	hosts         map[string]string
	upstreamHosts map[string]string
	max           int64
	log           *slog.Logger
	transport     *http.Transport
	proxy         *httputil.ReverseProxy
}

// errAnswerRefused wraps every reason an answer to rewrite is refused.
var errAnswerRefused = errors.New("lethe-proxy: the control plane's answer could not be rewritten to point at the proxy, so it was not passed on")

// errUpgradeRefused answers an upstream that agreed to a protocol upgrade:
// the tunnel would carry answers no rewrite sees.
var errUpgradeRefused = errors.New("lethe-proxy: the control plane agreed to a protocol upgrade, which the relay does not tunnel; send the request as plain HTTP")

// New checks cfg and builds the upstream transport; nothing is dialled
// until the first request.
func New(cfg Config) (*Relay, error) {
	u := cfg.Upstream
	if u == nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("pinecone control plane: upstream %v is not an https:// or http:// host (write e.g. %s)", u, DefaultUpstream)
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("pinecone control plane: upstream %v has a path or query; give the host alone (e.g. %s)", u, DefaultUpstream)
	}
	p := &Relay{hosts: cfg.Hosts, upstreamHosts: cfg.UpstreamHosts, max: cfg.MaxAnswerBytes, log: cfg.Logger}
	if p.max <= 0 {
		p.max = DefaultMaxAnswerBytes
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.transport = http.DefaultTransport.(*http.Transport).Clone()
	p.transport.Proxy = nil // reached directly, as the index hosts are
	p.transport.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			if p.classify(pr.In) != passThrough {
				// Without an Accept-Encoding of the client's, the transport
				// asks for gzip itself and hands ModifyResponse the decoded
				// body; the client gets the rewritten answer uncompressed.
				pr.Out.Header.Del("Accept-Encoding")
			}
		},
		Transport:      p.transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
	return p, nil
}

// ServeHTTP relays one control-plane request.
func (p *Relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.proxy.ServeHTTP(w, r)
}

// Close drops the idle upstream connections.
func (p *Relay) Close() { p.transport.CloseIdleConnections() }

// modifyResponse rewrites a successful list or describe answer; every
// other answer streams as it came.
func (p *Relay) modifyResponse(resp *http.Response) error {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body.Close()
		return errUpgradeRefused
	}
	kind := p.classify(resp.Request)
	if kind == passThrough || resp.StatusCode != http.StatusOK {
		return nil
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return fmt.Errorf("%w: it came in content coding %q, which the relay did not ask for and cannot read", errAnswerRefused, enc)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.max+1))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%w: reading it: %v", errAnswerRefused, err)
	}
	if int64(len(body)) > p.max {
		return fmt.Errorf("%w: it is larger than %d bytes, the bound on an answer held for rewriting", errAnswerRefused, p.max)
	}
	rewrite := p.rewriteList
	if kind == describeIndex {
		rewrite = p.rewriteDescribe
	}
	out, replaced, err := rewrite(body)
	if err != nil {
		return fmt.Errorf("%w: %v", errAnswerRefused, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Etag") // the bytes changed
	p.log.Debug("pinecone control plane answer rewritten", "path", resp.Request.URL.EscapedPath(), "indexes", replaced)
	return nil
}

// errorHandler answers in the control plane's error shape: 502 when the
// upstream could not be reached or its answer could not be rewritten.
func (p *Relay) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errAnswerRefused) {
		p.log.Warn("pinecone control plane answer refused", "method", r.Method, "path", r.URL.EscapedPath(), "err", err)
		writeError(w, http.StatusBadGateway, "UNAVAILABLE", err.Error()+
			"; the SDK would otherwise reach the index around the proxy. Ask again, or give the SDK the proxy's data-plane address as the index host")
		return
	}
	if errors.Is(err, errUpgradeRefused) {
		writeError(w, http.StatusBadGateway, "UNAVAILABLE", err.Error())
		return
	}
	p.log.Warn("pinecone control plane unreachable", "method", r.Method, "path", r.URL.EscapedPath(), "err", err)
	writeError(w, http.StatusBadGateway, "UNAVAILABLE", fmt.Sprintf(
		"lethe-proxy: the Pinecone control plane could not be reached (%v); check pinecone.control_plane.upstream and the network", err))
}
