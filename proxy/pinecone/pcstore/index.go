package pcstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Config is one index host as forget reaches it.
type Config struct {
	Name string // the index's name: layers are named "<Name>/<namespace>"
	// Host is the index host itself (https://… or http://… for Pinecone
	// Local), never the proxy: forget's own deletes need no capture.
	Host string
	// APIKey authenticates forget's calls. It may be empty only for an
	// http:// host (Pinecone Local accepts any key).
	APIKey string
	// RootCAs verifies an https host; nil means the system roots.
	RootCAs *x509.CertPool
	// VerifyDeadline bounds Residual's polling (default 60s).
	VerifyDeadline time.Duration
	// API is the index's data plane: APIVectors (the default when empty)
	// or APIDocuments.
	API API
	// Pace, when set, is waited for before each list and fetch request a
	// page-by-page read sends (Scan, the retention sweep): a scheduled
	// scan paces itself with it so that it leaves the index's rate limits
	// to the application. Its error ends the read.
	Pace func(context.Context) error
	// WatchWrite, when set, is called before each delete the connection
	// sends to namespace ns; the function it returns is given the
	// delete's x-pinecone-request-lsn once the index answered success with
	// one (pcwing's restore detection).
	WatchWrite func(ns string) func(lsn uint64)
}

// API names an index's data plane, as the index's api key in the config
// file spells it.
type API string

const (
	// APIVectors is the vectors API (upsert, query, fetch, list, delete of
	// vectors with metadata), reached over gRPC with go-pinecone.
	APIVectors API = "vectors"
	// APIDocuments is API version 2026-07's document index, reached over
	// REST under /namespaces/{namespace}/documents/ (documents.go).
	APIDocuments API = "documents"
)

// ErrNoAPIKey is returned by Open for an https host without an API key.
var ErrNoAPIKey = errors.New("pinecone: no API key for an https index host")

// localAPIKey is sent to an http:// host when no key is configured:
// go-pinecone refuses an empty key, and Pinecone Local ignores it.
const localAPIKey = "pinecone-local"

// Probing bounds, and the backoff of Residual's polling.
const (
	chunkSize     = 1000  // ids per fetch and per delete (Pinecone's limit)
	maxTopK       = 10000 // Pinecone's largest topK (without metadata and values)
	maxProbes     = 16    // query vectors tried per filter before giving up on finding more
	firstBackoff  = 100 * time.Millisecond
	maxBackoff    = 2 * time.Second
	defaultVerify = 60 * time.Second
)

// Index is one Pinecone index host, shared by the layers of its rules.
// It is safe for concurrent use.
type Index struct {
	name     string
	conn     *pinecone.IndexConnection // nil for a document index
	docs     *documentsAPI             // nil for a vectors index
	deadline time.Duration
	topK     uint32                       // maxTopK; smaller in tests
	docPage  int                          // documentPage; smaller in tests
	pace     func(context.Context) error  // Config.Pace; nil waits for nothing
	watch    func(ns string) func(uint64) // Config.WatchWrite; nil tells no one

	mu        sync.Mutex
	dimension uint32            // the index's dense dimension, once known
	deletes   map[string]uint64 // namespace → highest request LSN of our deletes
}

// Open prepares a connection to the index host; no request is sent until a
// layer needs one.
func Open(cfg Config) (*Index, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("pinecone: index %q: host is not an https:// or http:// URL", cfg.Name)
	}
	key := cfg.APIKey
	if key == "" {
		if u.Scheme == "https" {
			return nil, fmt.Errorf("%w (index %q)", ErrNoAPIKey, cfg.Name)
		}
		key = localAPIKey
	}
	if cfg.VerifyDeadline <= 0 {
		cfg.VerifyDeadline = defaultVerify
	}
	ix := &Index{name: cfg.Name, deadline: cfg.VerifyDeadline, topK: maxTopK, docPage: documentPage, pace: cfg.Pace, watch: cfg.WatchWrite, deletes: map[string]uint64{}}
	switch cfg.API {
	case APIDocuments:
		ix.docs = newDocumentsAPI(u, key, cfg.RootCAs)
		return ix, nil
	case APIVectors, "":
	default:
		return nil, fmt.Errorf("pinecone: index %q: api %q is neither %q nor %q", cfg.Name, cfg.API, APIVectors, APIDocuments)
	}
	pc, err := pinecone.NewClient(pinecone.NewClientParams{ApiKey: key, SourceTag: "lethe"})
	if err != nil {
		return nil, fmt.Errorf("pinecone: index %q: %w", cfg.Name, err)
	}
	opts := []grpc.DialOption{grpc.WithChainUnaryInterceptor(lsnInterceptor)}
	if u.Scheme == "https" {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12})))
	}
	if ix.conn, err = pc.Index(pinecone.NewIndexConnParams{Host: cfg.Host}, opts...); err != nil {
		return nil, fmt.Errorf("pinecone: index %q: %w", cfg.Name, err)
	}
	return ix, nil
}

// Close releases the connection.
func (ix *Index) Close() error {
	if ix.docs != nil {
		ix.docs.close()
		return nil
	}
	return ix.conn.Close()
}

// Name is the index's name.
func (ix *Index) Name() string { return ix.name }

func (ix *Index) namespace(ns string) *pinecone.IndexConnection { return ix.conn.WithNamespace(ns) }

// stats returns the namespaces holding records and the index's dense
// dimension (0 while it holds none).
func (ix *Index) stats(ctx context.Context) (namespaces []string, dimension uint32, err error) {
	if ix.docs != nil {
		namespaces, err = ix.docs.namespaces(ctx, ix.name)
		return namespaces, 0, err
	}
	st, err := ix.conn.DescribeIndexStats(ctx)
	if err != nil {
		return nil, 0, ix.failed("describe_index_stats", "", err)
	}
	for ns := range st.Namespaces {
		namespaces = append(namespaces, extract.CanonicalNamespace(ns))
	}
	if st.Dimension != nil && *st.Dimension > 0 {
		ix.mu.Lock()
		ix.dimension = *st.Dimension
		ix.mu.Unlock()
		return namespaces, *st.Dimension, nil
	}
	if st.TotalVectorCount > 0 {
		return nil, 0, fmt.Errorf("pinecone: index %q reports records but no dense dimension: forget's filtered queries need a dense index (sparse-only indexes are not supported)", ix.name)
	}
	return namespaces, 0, nil
}

// dense returns the index's dimension, asking the index until it has one;
// 0 means the index holds no records yet.
func (ix *Index) dense(ctx context.Context) (uint32, error) {
	ix.mu.Lock()
	d := ix.dimension
	ix.mu.Unlock()
	if d > 0 {
		return d, nil
	}
	_, d, err := ix.stats(ctx)
	return d, err
}

// deleted remembers the request LSN of a delete in namespace ns.
func (ix *Index) deleted(ns string, lsn uint64) {
	ix.mu.Lock()
	ix.deletes[ns] = max(ix.deletes[ns], lsn)
	ix.mu.Unlock()
}

// deleteLSN is the highest request LSN of this process's deletes in ns (0
// when none is known).
func (ix *Index) deleteLSN(ns string) uint64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.deletes[ns]
}

// Namespaces returns the namespaces the index reports holding records
// (DescribeIndexStats; GET /namespaces for a document index), the default
// one spelled "__default__".
func (ix *Index) Namespaces(ctx context.Context) ([]string, error) {
	if ix.docs != nil {
		return ix.docs.namespaces(ctx, ix.name)
	}
	st, err := ix.conn.DescribeIndexStats(ctx)
	if err != nil {
		return nil, ix.failed("describe_index_stats", "", err)
	}
	out := make([]string, 0, len(st.Namespaces))
	for ns := range st.Namespaces {
		out = append(out, extract.CanonicalNamespace(ns))
	}
	return out, nil
}
