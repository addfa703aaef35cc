package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultMaxRequestBytes is Pinecone's documented limit for one upsert request (2 MB).
const DefaultMaxRequestBytes = 2 << 20

// Metric names accepted in Config.Metric, spelled as Pinecone spells them.
const (
	MetricCosine     = "cosine"
	MetricDotProduct = "dotproduct"
	MetricEuclidean  = "euclidean"
)

// Config describes the one index the emulator serves.
type Config struct {
	// IndexName is the index's name in DescribeIndex (GET /indexes/{name});
	// empty means "emulated".
	IndexName string
	// Host is the data-plane address DescribeIndex reports, e.g. a proxy in
	// front of the emulator; empty means the address the request came to.
	Host string
	// APIKey, when not empty, must be sent as the Api-Key header (REST) or
	// api-key metadata (gRPC); anything else is refused as unauthenticated.
	APIKey string
	// Metric scores queries: MetricCosine (the default), MetricDotProduct or MetricEuclidean.
	Metric string
	// Dimension fixes the dense vector length; 0 takes it from the first upsert.
	Dimension int
	// DeleteDelay keeps deleted records visible to fetch, list, query and stats
	// for this long, as Pinecone's deletes are eventually consistent.
	DeleteDelay time.Duration
	// MaxRequestBytes bounds one request body (REST) or message (gRPC);
	// 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Logger receives one line per refused request; nil discards.
	Logger *slog.Logger
	// Now is the clock (tests may replace it); nil means time.Now.
	Now func() time.Time
}

// Server is an in-memory Pinecone index data plane. Its Handler serves the REST
// API and the gRPC VectorService on the same port, told apart by content type.
type Server struct {
	cfg   Config
	store *store

	mu   sync.Mutex
	http *http.Server
}

// New returns a Server for cfg, with defaults filled in.
func New(cfg Config) *Server {
	if cfg.IndexName == "" {
		cfg.IndexName = "emulated"
	}
	if cfg.Metric == "" {
		cfg.Metric = MetricCosine
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Server{cfg: cfg, store: newStore(cfg.Dimension, cfg.DeleteDelay, cfg.Now)}
}

// Handler serves REST requests and, over HTTP/2 with an application/grpc
// content type, gRPC calls.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && isGRPCContentType(r.Header.Get("Content-Type")) {
			s.serveGRPC(w, r)
			return
		}
		s.serveREST(w, r)
	})
}

// Serve accepts connections on l until Close. With tlsConf nil it speaks
// HTTP/1.1 and HTTP/2 with prior knowledge (h2c, as Pinecone Local does);
// otherwise TLS, offering h2 and http/1.1 through ALPN.
func (s *Server) Serve(l net.Listener, tlsConf *tls.Config) error {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(tlsConf == nil)
	hs := &http.Server{
		Handler:           s.Handler(),
		Protocols:         &protocols,
		TLSConfig:         tlsConf,
		ReadHeaderTimeout: 30 * time.Second,
	}
	s.mu.Lock()
	if s.http != nil {
		s.mu.Unlock()
		return errors.New("emulator: Serve called twice; use one Server per listener")
	}
	s.http = hs
	s.mu.Unlock()
	var err error
	if tlsConf != nil {
		err = hs.ServeTLS(l, "", "")
	} else {
		err = hs.Serve(l)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops Serve and closes open connections.
func (s *Server) Close() error {
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		return hs.Close()
	}
	return nil
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background,
// with TLS when tlsConf is not nil. It returns the base URL clients use:
// http://host:port or https://host:port.
func (s *Server) Start(addr string, tlsConf *tls.Config) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("emulator: listening on %s: %w", addr, err)
	}
	go func() {
		if err := s.Serve(l, tlsConf); err != nil {
			s.cfg.Logger.Error("pinecone emulator stopped serving", "err", err)
		}
	}()
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	return scheme + "://" + l.Addr().String(), nil
}

// isGRPCContentType accepts application/grpc and its +format and ;parameter
// forms, and not application/grpc-web, which is another protocol.
func isGRPCContentType(ct string) bool {
	rest, ok := strings.CutPrefix(ct, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}
