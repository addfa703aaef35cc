package pinecone_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

const testAPIKey = "test-key-0123"

// seen records what reached the upstream whole: each request's raw path
// and headers, as the emulator's handler received them.
type seen struct {
	mu       sync.Mutex
	requests []*http.Request
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Clone(r.Context()))
}

func (s *seen) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// startEmulator serves a fresh emulator index on a free local port until
// the test ends, as Pinecone Local does (h2c and HTTP/1.1 with tlsConf nil,
// else TLS with ALPN), recording every request it receives whole. The
// recorder reads each body whole before the emulator sees it: a request
// whose body breaks off (the relay aborted it) goes no further.
func startEmulator(t testing.TB, cfg emulator.Config, tlsConf *tls.Config) (string, *seen) {
	t.Helper()
	em := emulator.New(cfg)
	rec := &seen{}
	h := em.Handler()
	return serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec.add(r)
		h.ServeHTTP(w, r)
	}), tlsConf), rec
}

// serveHTTP serves h on a free local port until the test ends and returns
// its base URL.
func serveHTTP(t testing.TB, h http.Handler, tlsConf *tls.Config) string {
	t.Helper()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(tlsConf == nil)
	hs := &http.Server{Handler: h, Protocols: &protocols, TLSConfig: tlsConf.Clone(), ReadHeaderTimeout: 30 * time.Second}
	return serveOn(t, hs)
}

func serveOn(t testing.TB, hs *http.Server) string {
	t.Helper()
	return serveOnListener(t, hs, listen(t))
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}

func serveOnListener(t testing.TB, hs *http.Server, l net.Listener) string {
	t.Helper()
	scheme := "http"
	if hs.TLSConfig != nil {
		scheme = "https"
	}
	go pinecone.Serve(hs, l)
	t.Cleanup(func() { _ = hs.Close() })
	return scheme + "://" + l.Addr().String()
}

// startRelay relays to the upstream URLs (one index each, named in order
// from names) and returns the relay's base URL; tlsConf as for
// startEmulator, roots verifies https upstreams.
func startRelay(t testing.TB, cfg pinecone.Config, tlsConf *tls.Config) string {
	t.Helper()
	relay, err := pinecone.New(cfg)
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	return serveOn(t, relay.Server(tlsConf))
}

// index is the Index for one upstream base URL.
func index(t testing.TB, name, upstream string, roots *x509.CertPool) *pinecone.Index {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	return &pinecone.Index{Name: name, Upstream: u, RootCAs: roots}
}

// relayTo starts an emulator-backed relay for one index and returns the
// relay's URL and what reached the emulator.
func relayTo(t *testing.T, cfg emulator.Config) (string, *seen) {
	t.Helper()
	upstream, rec := startEmulator(t, cfg, nil)
	return startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}}, nil), rec
}

// freeAddr returns a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
