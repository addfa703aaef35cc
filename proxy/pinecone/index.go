package pinecone

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Index is one upstream Pinecone index host the relay forwards to.
type Index struct {
	// Name routes requests when several indexes are configured (see the
	// package comment) and names the index in errors and logs.
	Name string
	// Upstream is the index host: https://… (TLS; gRPC through ALPN h2)
	// or http://… (cleartext; gRPC over HTTP/2 with prior knowledge, as
	// Pinecone Local serves it). Its path must be empty.
	Upstream *url.URL
	// RootCAs verifies an https upstream; nil means the system roots.
	RootCAs *x509.CertPool

	rest, grpc http.RoundTripper
}

// transports builds the two ways to reach the upstream: REST over HTTP/1.1
// (or h2 if the TLS upstream offers it), gRPC over HTTP/2 only, since a
// gRPC call cannot travel over HTTP/1.1.
func (ix *Index) transports() error {
	u := ix.Upstream
	if u == nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("lethe-proxy: index %q: upstream %v is not an http:// or https:// host", ix.Name, u)
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return fmt.Errorf("lethe-proxy: index %q: upstream %v has a path; give the index host alone (e.g. https://docs-abc123.svc.pinecone.io)", ix.Name, u)
	}
	tlsConf := &tls.Config{RootCAs: ix.RootCAs, MinVersion: tls.VersionTLS12}
	var rest, grpc http.Protocols
	if u.Scheme == "https" {
		rest.SetHTTP1(true)
		rest.SetHTTP2(true)
		grpc.SetHTTP2(true)
	} else {
		rest.SetHTTP1(true)
		grpc.SetUnencryptedHTTP2(true)
	}
	newTransport := func(p *http.Protocols) *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // the index host is reached directly
		t.TLSClientConfig = tlsConf.Clone()
		t.Protocols = p
		t.MaxIdleConnsPerHost = 64
		return t
	}
	ix.rest, ix.grpc = newTransport(&rest), newTransport(&grpc)
	return nil
}

// RoundTrip sends gRPC calls over HTTP/2 and everything else over the REST
// transport.
func (ix *Index) RoundTrip(r *http.Request) (*http.Response, error) {
	if IsGRPC(r) {
		return ix.grpc.RoundTrip(r)
	}
	return ix.rest.RoundTrip(r)
}

// close drops the idle upstream connections.
func (ix *Index) close() {
	for _, t := range []http.RoundTripper{ix.rest, ix.grpc} {
		if t, ok := t.(*http.Transport); ok {
			t.CloseIdleConnections()
		}
	}
}
