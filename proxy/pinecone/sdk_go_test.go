package pinecone_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// These tests drive the relay with the real go-pinecone v5 SDK: its data
// plane calls are gRPC (cleartext h2c for an http:// host, TLS for
// https://); UpsertRecords is REST and always https.

func goSDKIndex(t *testing.T, host, apiKey, namespace string, restClient *http.Client, dialOpts ...grpc.DialOption) *gopinecone.IndexConnection {
	t.Helper()
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: apiKey, RestClient: restClient})
	require.NoError(t, err)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: host, Namespace: namespace}, dialOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

func meta(t *testing.T, m map[string]any) *gopinecone.Metadata {
	t.Helper()
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

func vec(id string, values []float32, md *gopinecone.Metadata) *gopinecone.Vector {
	return &gopinecone.Vector{Id: id, Values: &values, Metadata: md}
}

func sdkContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// goSDKReport runs the SDK's data-plane calls (upsert, fetch, list, query,
// update, update by filter, stats, namespaces, deletes) and returns what
// each returned, for comparing a relayed run with a direct one.
func goSDKReport(t *testing.T, idx *gopinecone.IndexConnection) map[string]any {
	t.Helper()
	ctx := sdkContext(t)
	report := map[string]any{}
	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{
		vec("doc#1", []float32{1, 0, 0}, meta(t, map[string]any{"subject": "alice", "year": 2020})),
		vec("doc#2", []float32{0.9, 0.1, 0}, meta(t, map[string]any{"subject": "bob", "year": 2022})),
		vec("doc#3", []float32{0, 1, 0}, meta(t, map[string]any{"subject": "alice", "year": 2024})),
	})
	require.NoError(t, err)
	report["upserted"] = n

	fetched, err := idx.FetchVectors(ctx, []string{"doc#1", "missing"})
	require.NoError(t, err)
	report["fetchIds"] = mapKeys(fetched.Vectors)
	report["fetchValues"] = *fetched.Vectors["doc#1"].Values
	report["fetchMeta"] = fetched.Vectors["doc#1"].Metadata.AsMap()

	prefix, limit := "doc#", uint32(2)
	page1, err := idx.ListVectors(ctx, &gopinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit})
	require.NoError(t, err)
	page2, err := idx.ListVectors(ctx, &gopinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit, PaginationToken: page1.NextPaginationToken})
	require.NoError(t, err)
	report["list"] = [][]string{derefAll(page1.VectorIds), derefAll(page2.VectorIds)}

	res, err := idx.QueryByVectorValues(ctx, &gopinecone.QueryByVectorValuesRequest{
		Vector: []float32{1, 0, 0}, TopK: 2, IncludeMetadata: true,
		MetadataFilter: meta(t, map[string]any{"year": map[string]any{"$gte": 2021}}),
	})
	require.NoError(t, err)
	var matches []any
	for _, m := range res.Matches {
		matches = append(matches, []any{m.Vector.Id, m.Score, m.Vector.Metadata.AsMap()})
	}
	report["query"] = matches

	require.NoError(t, idx.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "doc#1", Metadata: meta(t, map[string]any{"subject": "carol"})}))
	upd, err := idx.UpdateVectorsByMetadata(ctx, &gopinecone.UpdateVectorsByMetadataRequest{
		Filter: meta(t, map[string]any{"subject": "alice"}), Metadata: meta(t, map[string]any{"reviewed": true})})
	require.NoError(t, err)
	report["updatedByFilter"] = upd.MatchedRecords

	stats, err := idx.DescribeIndexStats(ctx)
	require.NoError(t, err)
	report["stats"] = []any{stats.TotalVectorCount, *stats.Dimension, stats.Namespaces["docs"].VectorCount}
	namespaces, err := idx.ListNamespaces(ctx, &gopinecone.ListNamespacesParams{})
	require.NoError(t, err)
	report["namespaces"] = len(namespaces.Namespaces)

	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"doc#2"}))
	require.NoError(t, idx.DeleteVectorsByFilter(ctx, meta(t, map[string]any{"subject": "carol"})))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1", "doc#2", "doc#3"})
	require.NoError(t, err)
	report["afterDeletes"] = mapKeys(fetched.Vectors)
	require.NoError(t, idx.DeleteAllVectorsInNamespace(ctx))
	_, err = idx.DescribeNamespace(ctx, "docs")
	report["describeDeleted"] = status.Code(err).String()
	return report
}

// The SDK's gRPC calls over cleartext HTTP/2 return through the relay what
// they return direct: requests, responses and trailers pass unchanged.
func TestGoSDK_CleartextGRPCSameAsDirect(t *testing.T) {
	direct, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	want := goSDKReport(t, goSDKIndex(t, direct, testAPIKey, "docs", nil))

	relayed, rec := relayTo(t, emulator.Config{APIKey: testAPIKey})
	got := goSDKReport(t, goSDKIndex(t, relayed, testAPIKey, "docs", nil))
	assert.Equal(t, want, got)
	assert.Equal(t, "NotFound", got["describeDeleted"])

	reqs := rec.all()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Equal(t, []string{testAPIKey}, r.Header.Values("Api-Key"), r.URL.Path)
		assert.Empty(t, r.Header.Values("X-Forwarded-For"), "the relay adds no headers")
		assert.Equal(t, 2, r.ProtoMajor, "gRPC reaches the upstream over HTTP/2")
	}
}

// Over TLS on both sides (the relay's own certificate; the upstream's
// verified with a CA file's pool) the SDK's gRPC calls negotiate h2 by
// ALPN and its REST UpsertRecords (always https) works on the same port.
func TestGoSDK_TLSBothSidesSameAsDirect(t *testing.T) {
	upCert, relayCert := newTestCert(t), newTestCert(t)
	upstream, rec := startEmulator(t, emulator.Config{APIKey: testAPIKey}, upCert.server)
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, upCert.roots)}}, relayCert.server)

	rest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: relayCert.roots}}}
	idx := goSDKIndex(t, relayed, testAPIKey, "docs", rest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: relayCert.roots})))
	direct, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey}, upCert.server)
	directRest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: upCert.roots}}}
	want := goSDKReport(t, goSDKIndex(t, direct, testAPIKey, "docs", directRest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: upCert.roots}))))
	assert.Equal(t, want, goSDKReport(t, idx))

	ctx := sdkContext(t)
	require.NoError(t, idx.UpsertRecords(ctx, []*gopinecone.IntegratedRecord{
		{"_id": "r1", "chunk_text": "hello", "subject": "erin"},
	}))
	fetched, err := idx.FetchVectors(ctx, []string{"r1"})
	require.NoError(t, err)
	require.Contains(t, fetched.Vectors, "r1", "UpsertRecords does not check the HTTP status; the fetch is the proof")
	assert.Equal(t, "erin", fetched.Vectors["r1"].Metadata.Fields["subject"].GetStringValue())
	var sawRecords bool
	for _, r := range rec.all() {
		sawRecords = sawRecords || r.URL.Path == "/records/namespaces/docs/upsert"
	}
	assert.True(t, sawRecords, "UpsertRecords went through the relay")
}

// The emulator's refusal of a wrong Api-Key reaches the SDK unchanged.
func TestGoSDK_UpstreamRefusalPassesThrough(t *testing.T) {
	relayed, _ := relayTo(t, emulator.Config{APIKey: testAPIKey})
	idx := goSDKIndex(t, relayed, "wrong-key", "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*gopinecone.Vector{vec("a", []float32{1}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
}

func TestGoSDK_UpstreamDownIsUnavailable(t *testing.T) {
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", "http://"+freeAddr(t), nil)}}, nil)
	idx := goSDKIndex(t, relayed, testAPIKey, "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*gopinecone.Vector{vec("a", []float32{1}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "lethe-proxy: cannot reach the Pinecone index host")
}

// An oversized upsert is refused RESOURCE_EXHAUSTED by the relay itself
// (the emulator's limit is higher), and the next call on the same
// connection succeeds.
func TestGoSDK_OversizedIsResourceExhaustedAndConnectionStaysUsable(t *testing.T) {
	upstream, rec := startEmulator(t, emulator.Config{}, nil)
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}, MaxRequestBytes: 4096}, nil)
	idx := goSDKIndex(t, relayed, testAPIKey, "docs", nil)
	ctx := sdkContext(t)
	_, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{vec("big", make([]float32, 2000), nil)})
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "larger than 4096 bytes")
	assert.Empty(t, rec.all(), "nothing oversized reaches the upstream")

	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{vec("small", []float32{1, 2}, nil)})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
}

func derefAll(ps []*string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, *p)
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// An upstream error answered trailers-only (grpc-status in the one HEADERS
// frame that ends the stream, as gRPC servers answer a call refused before
// any message) reaches the SDK with its status, every time: the relay must
// not send those headers early without ending the stream.
func TestGoSDK_TrailersOnlyErrorKeepsItsStatus(t *testing.T) {
	relayed, _ := relayTo(t, emulator.Config{})
	idx := goSDKIndex(t, relayed, testAPIKey, "docs", nil)
	ctx := sdkContext(t)
	for i := range 200 {
		_, err := idx.DescribeNamespace(ctx, "never-written")
		require.Equal(t, codes.NotFound, status.Code(err), "call %d: %v", i, err)
	}
}
