package pinecone_test

import (
	"crypto/tls"
	"net/http"
	"testing"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// These tests drive the relay with the real go-pinecone v5 SDK: its data
// plane calls are gRPC (cleartext h2c for an http:// host, TLS for
// https://); UpsertRecords is REST and always https.

// goSDKReport runs the SDK's data-plane calls (upsert, fetch, list, query,
// update, update by filter, stats, namespaces, deletes) and returns what
// each returned, for comparing a relayed run with a direct one.
func goSDKReport(t *testing.T, idx *gopinecone.IndexConnection) map[string]any {
	t.Helper()
	ctx := sdktest.Context(t)
	report := map[string]any{}
	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{
		sdktest.Vec("doc#1", []float32{1, 0, 0}, sdktest.Meta(t, map[string]any{"subject": "alice", "year": 2020})),
		sdktest.Vec("doc#2", []float32{0.9, 0.1, 0}, sdktest.Meta(t, map[string]any{"subject": "bob", "year": 2022})),
		sdktest.Vec("doc#3", []float32{0, 1, 0}, sdktest.Meta(t, map[string]any{"subject": "alice", "year": 2024})),
	})
	require.NoError(t, err)
	report["upserted"] = n

	fetched, err := idx.FetchVectors(ctx, []string{"doc#1", "missing"})
	require.NoError(t, err)
	report["fetchIds"] = sdktest.MapKeys(fetched.Vectors)
	report["fetchValues"] = *fetched.Vectors["doc#1"].Values
	report["fetchMeta"] = fetched.Vectors["doc#1"].Metadata.AsMap()

	prefix, limit := "doc#", uint32(2)
	page1, err := idx.ListVectors(ctx, &gopinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit})
	require.NoError(t, err)
	page2, err := idx.ListVectors(ctx, &gopinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit, PaginationToken: page1.NextPaginationToken})
	require.NoError(t, err)
	report["list"] = [][]string{sdktest.DerefAll(page1.VectorIds), sdktest.DerefAll(page2.VectorIds)}

	res, err := idx.QueryByVectorValues(ctx, &gopinecone.QueryByVectorValuesRequest{
		Vector: []float32{1, 0, 0}, TopK: 2, IncludeMetadata: true,
		MetadataFilter: sdktest.Meta(t, map[string]any{"year": map[string]any{"$gte": 2021}}),
	})
	require.NoError(t, err)
	var matches []any
	for _, m := range res.Matches {
		matches = append(matches, []any{m.Vector.Id, m.Score, m.Vector.Metadata.AsMap()})
	}
	report["query"] = matches

	require.NoError(t, idx.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "doc#1", Metadata: sdktest.Meta(t, map[string]any{"subject": "carol"})}))
	upd, err := idx.UpdateVectorsByMetadata(ctx, &gopinecone.UpdateVectorsByMetadataRequest{
		Filter: sdktest.Meta(t, map[string]any{"subject": "alice"}), Metadata: sdktest.Meta(t, map[string]any{"reviewed": true})})
	require.NoError(t, err)
	report["updatedByFilter"] = upd.MatchedRecords

	stats, err := idx.DescribeIndexStats(ctx)
	require.NoError(t, err)
	report["stats"] = []any{stats.TotalVectorCount, *stats.Dimension, stats.Namespaces["docs"].VectorCount}
	namespaces, err := idx.ListNamespaces(ctx, &gopinecone.ListNamespacesParams{})
	require.NoError(t, err)
	report["namespaces"] = len(namespaces.Namespaces)

	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"doc#2"}))
	require.NoError(t, idx.DeleteVectorsByFilter(ctx, sdktest.Meta(t, map[string]any{"subject": "carol"})))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1", "doc#2", "doc#3"})
	require.NoError(t, err)
	report["afterDeletes"] = sdktest.MapKeys(fetched.Vectors)
	require.NoError(t, idx.DeleteAllVectorsInNamespace(ctx))
	_, err = idx.DescribeNamespace(ctx, "docs")
	report["describeDeleted"] = status.Code(err).String()
	return report
}

// The SDK's gRPC calls over cleartext HTTP/2 return through the relay what
// they return direct: requests, responses and trailers pass unchanged.
func TestGoSDK_CleartextGRPCSameAsDirect(t *testing.T) {
	direct, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	want := goSDKReport(t, sdktest.GoIndex(t, direct, testAPIKey, "docs", nil))

	relayed, rec := relayTo(t, emulator.Config{APIKey: testAPIKey})
	got := goSDKReport(t, sdktest.GoIndex(t, relayed, testAPIKey, "docs", nil))
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
	upCert, relayCert := sdktest.NewCert(t, "lethe-proxy pinecone relay test"), sdktest.NewCert(t, "lethe-proxy pinecone relay test")
	upstream, rec := startEmulator(t, emulator.Config{APIKey: testAPIKey}, upCert.Server)
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, upCert.Roots)}}, relayCert.Server)

	rest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: relayCert.Roots}}}
	idx := sdktest.GoIndex(t, relayed, testAPIKey, "docs", rest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: relayCert.Roots})))
	direct, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey}, upCert.Server)
	directRest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: upCert.Roots}}}
	want := goSDKReport(t, sdktest.GoIndex(t, direct, testAPIKey, "docs", directRest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: upCert.Roots}))))
	assert.Equal(t, want, goSDKReport(t, idx))

	ctx := sdktest.Context(t)
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
	idx := sdktest.GoIndex(t, relayed, "wrong-key", "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*gopinecone.Vector{sdktest.Vec("a", []float32{1}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
}

func TestGoSDK_UpstreamDownIsUnavailable(t *testing.T) {
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", "http://"+freeAddr(t), nil)}}, nil)
	idx := sdktest.GoIndex(t, relayed, testAPIKey, "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*gopinecone.Vector{sdktest.Vec("a", []float32{1}, nil)})
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
	idx := sdktest.GoIndex(t, relayed, testAPIKey, "docs", nil)
	ctx := sdktest.Context(t)
	_, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("big", make([]float32, 2000), nil)})
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "larger than 4096 bytes")
	assert.Empty(t, rec.all(), "no oversized request reaches the upstream whole")

	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("small", []float32{1, 2}, nil)})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
}

// An upstream error answered trailers-only (grpc-status in the one HEADERS
// frame that ends the stream, as gRPC servers answer a call refused before
// any message) reaches the SDK with its status, every time: the relay must
// not send those headers early without ending the stream.
func TestGoSDK_TrailersOnlyErrorKeepsItsStatus(t *testing.T) {
	relayed, _ := relayTo(t, emulator.Config{})
	idx := sdktest.GoIndex(t, relayed, testAPIKey, "docs", nil)
	ctx := sdktest.Context(t)
	for i := range 200 {
		_, err := idx.DescribeNamespace(ctx, "never-written")
		require.Equal(t, codes.NotFound, status.Code(err), "call %d: %v", i, err)
	}
}
