package emulator_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// These tests drive the emulator with the real go-pinecone v5 SDK: its data
// plane calls are gRPC (insecure for an http:// host, TLS for https://), its
// UpsertRecords is REST and always https.

func goSDKIndex(t *testing.T, host, apiKey, namespace string, restClient *http.Client, dialOpts ...grpc.DialOption) *pinecone.IndexConnection {
	t.Helper()
	pc, err := pinecone.NewClient(pinecone.NewClientParams{ApiKey: apiKey, RestClient: restClient})
	require.NoError(t, err)
	idx, err := pc.Index(pinecone.NewIndexConnParams{Host: host, Namespace: namespace}, dialOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

func meta(t *testing.T, m map[string]any) *pinecone.Metadata {
	t.Helper()
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

func vec(id string, values []float32, md *pinecone.Metadata) *pinecone.Vector {
	return &pinecone.Vector{Id: id, Values: &values, Metadata: md}
}

func sdkContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGoSDK_DataPlaneOverCleartextGRPC(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	idx := goSDKIndex(t, url, testAPIKey, "docs", nil)
	ctx := sdkContext(t)

	n, err := idx.UpsertVectors(ctx, []*pinecone.Vector{
		vec("doc#1", []float32{1, 0, 0}, meta(t, map[string]any{"subject": "alice", "year": 2020, "tags": []any{"a", "b"}})),
		vec("doc#2", []float32{0.9, 0.1, 0}, meta(t, map[string]any{"subject": "bob", "year": 2022})),
		vec("doc#3", []float32{0, 1, 0}, meta(t, map[string]any{"subject": "alice", "year": 2024})),
		vec("other", []float32{0, 0, 1}, nil),
	})
	require.NoError(t, err)
	assert.EqualValues(t, 4, n)

	fetched, err := idx.FetchVectors(ctx, []string{"doc#1", "missing"})
	require.NoError(t, err)
	require.Len(t, fetched.Vectors, 1)
	got := fetched.Vectors["doc#1"]
	assert.Equal(t, []float32{1, 0, 0}, *got.Values)
	assert.Equal(t, "alice", got.Metadata.Fields["subject"].GetStringValue())
	assert.Equal(t, 2020.0, got.Metadata.Fields["year"].GetNumberValue())
	assert.Len(t, got.Metadata.Fields["tags"].GetListValue().GetValues(), 2)

	// List pages by prefix in id order.
	prefix, limit := "doc#", uint32(2)
	page1, err := idx.ListVectors(ctx, &pinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit})
	require.NoError(t, err)
	assert.Equal(t, []string{"doc#1", "doc#2"}, derefAll(page1.VectorIds))
	require.NotNil(t, page1.NextPaginationToken)
	page2, err := idx.ListVectors(ctx, &pinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit, PaginationToken: page1.NextPaginationToken})
	require.NoError(t, err)
	assert.Equal(t, []string{"doc#3"}, derefAll(page2.VectorIds))
	assert.Nil(t, page2.NextPaginationToken)

	// Query by values with a filter: doc#2 is nearest to (1,0,0) after doc#1, which the filter drops.
	res, err := idx.QueryByVectorValues(ctx, &pinecone.QueryByVectorValuesRequest{
		Vector: []float32{1, 0, 0}, TopK: 2, IncludeMetadata: true, IncludeValues: true,
		MetadataFilter: meta(t, map[string]any{"year": map[string]any{"$gte": 2021}}),
	})
	require.NoError(t, err)
	require.Len(t, res.Matches, 2)
	assert.Equal(t, "doc#2", res.Matches[0].Vector.Id)
	assert.InDelta(t, 0.9/0.9055385, res.Matches[0].Score, 1e-5)
	assert.Equal(t, "bob", res.Matches[0].Vector.Metadata.Fields["subject"].GetStringValue())
	assert.Equal(t, []float32{0.9, 0.1, 0}, *res.Matches[0].Vector.Values)
	assert.Equal(t, "doc#3", res.Matches[1].Vector.Id)

	byID, err := idx.QueryByVectorId(ctx, &pinecone.QueryByVectorIdRequest{VectorId: "doc#3", TopK: 1,
		MetadataFilter: meta(t, map[string]any{"$or": []any{map[string]any{"subject": "alice"}, map[string]any{"tags": map[string]any{"$in": []any{"zzz"}}}}})})
	require.NoError(t, err)
	require.Len(t, byID.Matches, 1)
	assert.Equal(t, "doc#3", byID.Matches[0].Vector.Id)

	// Update merges setMetadata key by key and replaces values.
	require.NoError(t, idx.UpdateVector(ctx, &pinecone.UpdateVectorRequest{Id: "doc#1", Values: []float32{0, 0, 2},
		Metadata: meta(t, map[string]any{"subject": "carol"})}))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1"})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 2}, *fetched.Vectors["doc#1"].Values)
	assert.Equal(t, "carol", fetched.Vectors["doc#1"].Metadata.Fields["subject"].GetStringValue())
	assert.Equal(t, 2020.0, fetched.Vectors["doc#1"].Metadata.Fields["year"].GetNumberValue())

	// Update by metadata filter.
	upd, err := idx.UpdateVectorsByMetadata(ctx, &pinecone.UpdateVectorsByMetadataRequest{
		Filter: meta(t, map[string]any{"subject": map[string]any{"$eq": "alice"}}), Metadata: meta(t, map[string]any{"reviewed": true})})
	require.NoError(t, err)
	assert.EqualValues(t, 1, upd.MatchedRecords) // doc#3; doc#1 is carol's now

	stats, err := idx.DescribeIndexStats(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 4, stats.TotalVectorCount)
	require.NotNil(t, stats.Dimension)
	assert.EqualValues(t, 3, *stats.Dimension)
	require.Contains(t, stats.Namespaces, "docs")
	assert.EqualValues(t, 4, stats.Namespaces["docs"].VectorCount)
	filtered, err := idx.DescribeIndexStatsFiltered(ctx, meta(t, map[string]any{"reviewed": true}))
	require.NoError(t, err)
	assert.EqualValues(t, 1, filtered.TotalVectorCount)

	namespaces, err := idx.ListNamespaces(ctx, &pinecone.ListNamespacesParams{})
	require.NoError(t, err)
	require.Len(t, namespaces.Namespaces, 1)
	assert.Equal(t, "docs", namespaces.Namespaces[0].Name)
	desc, err := idx.DescribeNamespace(ctx, "docs")
	require.NoError(t, err)
	assert.EqualValues(t, 4, desc.RecordCount)

	// Deletes: by id, by filter, then everything.
	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"doc#2", "never-existed"}))
	require.NoError(t, idx.DeleteVectorsByFilter(ctx, meta(t, map[string]any{"subject": "carol"})))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1", "doc#2", "doc#3", "other"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"doc#3", "other"}, mapKeys(fetched.Vectors))
	require.NoError(t, idx.DeleteAllVectorsInNamespace(ctx))
	stats, err = idx.DescribeIndexStats(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 0, stats.TotalVectorCount)
	_, err = idx.DescribeNamespace(ctx, "docs")
	assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)
}

// The Go SDK sends "__default__" when no namespace is set; REST clients
// that send "" (the Node SDK) must reach the same namespace.
func TestGoSDK_DefaultNamespaceIsShared(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	idx := goSDKIndex(t, url, "any", "", nil)
	ctx := sdkContext(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{vec("a", []float32{1, 2}, nil)})
	require.NoError(t, err)
	resp := restJSON(t, url, http.MethodGet, "/vectors/fetch?ids=a", "", nil)
	assert.Contains(t, resp.body, `"a"`)
	resp = restJSON(t, url, http.MethodGet, "/vectors/fetch?ids=a&namespace=__default__", "", nil)
	assert.Contains(t, resp.body, `"a"`)
}

func TestGoSDK_WrongAPIKeyIsUnauthenticated(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	idx := goSDKIndex(t, url, "wrong-key", "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*pinecone.Vector{vec("a", []float32{1}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
}

func TestGoSDK_InvalidArgumentStatus(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{Dimension: 2}, nil)
	idx := goSDKIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*pinecone.Vector{vec("a", []float32{1, 2, 3}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "dimension 3 does not match")
}

func TestGoSDK_NestedMetadataIsInvalidArgument(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	idx := goSDKIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*pinecone.Vector{vec("a", []float32{1}, meta(t, map[string]any{"person": map[string]any{"name": "x"}}))})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
}

// Through the SDK, a deleted id stays fetchable, listable and queryable for
// DeleteDelay; a settable clock stands in for the wait.
func TestGoSDK_DeleteDelay(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, url := startEmulator(t, emulator.Config{DeleteDelay: 5 * time.Second, Now: clock.Now}, nil)
	idx := goSDKIndex(t, url, "k", "docs", nil)
	ctx := sdkContext(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{vec("a", []float32{1, 0}, nil), vec("b", []float32{0, 1}, nil)})
	require.NoError(t, err)
	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"a"}))

	visible := func() []string {
		fetched, err := idx.FetchVectors(ctx, []string{"a", "b"})
		require.NoError(t, err)
		listed, err := idx.ListVectors(ctx, &pinecone.ListVectorsRequest{})
		require.NoError(t, err)
		assert.Equal(t, mapKeys(fetched.Vectors), derefAll(listed.VectorIds))
		queried, err := idx.QueryByVectorValues(ctx, &pinecone.QueryByVectorValuesRequest{Vector: []float32{1, 0}, TopK: 5})
		require.NoError(t, err)
		var ids []string
		for _, m := range queried.Matches {
			ids = append(ids, m.Vector.Id)
		}
		slices.Sort(ids)
		assert.Equal(t, mapKeys(fetched.Vectors), ids)
		return mapKeys(fetched.Vectors)
	}
	assert.Equal(t, []string{"a", "b"}, visible())
	clock.Advance(5 * time.Second)
	assert.Equal(t, []string{"b"}, visible())
}

func TestGoSDK_DeleteNamespace(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	idx := goSDKIndex(t, url, "k", "gone", nil)
	ctx := sdkContext(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{vec("a", []float32{1}, nil)})
	require.NoError(t, err)
	require.NoError(t, idx.DeleteNamespace(ctx, "gone"))
	fetched, err := idx.FetchVectors(ctx, []string{"a"})
	require.NoError(t, err)
	assert.Empty(t, fetched.Vectors)
	assert.Equal(t, codes.NotFound, status.Code(idx.DeleteNamespace(ctx, "gone")))
}

func TestGoSDK_MessageOverLimitIsResourceExhausted(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{MaxRequestBytes: 4096}, nil)
	idx := goSDKIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdkContext(t), []*pinecone.Vector{vec("big", make([]float32, 2000), nil)})
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}

// Over TLS the SDK's gRPC calls negotiate h2 through ALPN and its REST
// UpsertRecords (always https) uses HTTP/1.1 or h2 on the same port.
func TestGoSDK_GRPCAndRESTOverTLS(t *testing.T) {
	cert := newTestCert(t)
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, cert.server)
	rest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.roots}}}
	idx := goSDKIndex(t, url, testAPIKey, "records", rest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: cert.roots})))
	ctx := sdkContext(t)

	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{vec("v1", []float32{1, 2}, meta(t, map[string]any{"subject": "dan"}))})
	require.NoError(t, err)
	// UpsertRecords does not check the HTTP status, so the fetch below is the proof.
	require.NoError(t, idx.UpsertRecords(ctx, []*pinecone.IntegratedRecord{
		{"_id": "r1", "chunk_text": "hello", "subject": "erin"},
		{"id": "r2", "chunk_text": "world", "subject": "frank"},
	}))
	fetched, err := idx.FetchVectors(ctx, []string{"v1", "r1", "r2"})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"v1", "r1", "r2"}, mapKeys(fetched.Vectors))
	assert.Equal(t, map[string]any{"chunk_text": "hello", "subject": "erin"}, fetched.Vectors["r1"].Metadata.AsMap())
	assert.Equal(t, "world", fetched.Vectors["r2"].Metadata.Fields["chunk_text"].GetStringValue())
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
