package emulator_test

import (
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

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// These tests drive the emulator with the real go-pinecone v5 SDK: its data
// plane calls are gRPC (insecure for an http:// host, TLS for https://), its
// UpsertRecords is REST and always https.

func TestGoSDK_DataPlaneOverCleartextGRPC(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	idx := sdktest.GoIndex(t, url, testAPIKey, "docs", nil)
	ctx := sdktest.Context(t)

	n, err := idx.UpsertVectors(ctx, []*pinecone.Vector{
		sdktest.Vec("doc#1", []float32{1, 0, 0}, sdktest.Meta(t, map[string]any{"subject": "alice", "year": 2020, "tags": []any{"a", "b"}})),
		sdktest.Vec("doc#2", []float32{0.9, 0.1, 0}, sdktest.Meta(t, map[string]any{"subject": "bob", "year": 2022})),
		sdktest.Vec("doc#3", []float32{0, 1, 0}, sdktest.Meta(t, map[string]any{"subject": "alice", "year": 2024})),
		sdktest.Vec("other", []float32{0, 0, 1}, nil),
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
	assert.Equal(t, []string{"doc#1", "doc#2"}, sdktest.DerefAll(page1.VectorIds))
	require.NotNil(t, page1.NextPaginationToken)
	page2, err := idx.ListVectors(ctx, &pinecone.ListVectorsRequest{Prefix: &prefix, Limit: &limit, PaginationToken: page1.NextPaginationToken})
	require.NoError(t, err)
	assert.Equal(t, []string{"doc#3"}, sdktest.DerefAll(page2.VectorIds))
	assert.Nil(t, page2.NextPaginationToken)

	// Query by values with a filter: doc#2 is nearest to (1,0,0) after doc#1, which the filter drops.
	res, err := idx.QueryByVectorValues(ctx, &pinecone.QueryByVectorValuesRequest{
		Vector: []float32{1, 0, 0}, TopK: 2, IncludeMetadata: true, IncludeValues: true,
		MetadataFilter: sdktest.Meta(t, map[string]any{"year": map[string]any{"$gte": 2021}}),
	})
	require.NoError(t, err)
	require.Len(t, res.Matches, 2)
	assert.Equal(t, "doc#2", res.Matches[0].Vector.Id)
	assert.InDelta(t, 0.9/0.9055385, res.Matches[0].Score, 1e-5)
	assert.Equal(t, "bob", res.Matches[0].Vector.Metadata.Fields["subject"].GetStringValue())
	assert.Equal(t, []float32{0.9, 0.1, 0}, *res.Matches[0].Vector.Values)
	assert.Equal(t, "doc#3", res.Matches[1].Vector.Id)

	byID, err := idx.QueryByVectorId(ctx, &pinecone.QueryByVectorIdRequest{VectorId: "doc#3", TopK: 1,
		MetadataFilter: sdktest.Meta(t, map[string]any{"$or": []any{map[string]any{"subject": "alice"}, map[string]any{"tags": map[string]any{"$in": []any{"zzz"}}}}})})
	require.NoError(t, err)
	require.Len(t, byID.Matches, 1)
	assert.Equal(t, "doc#3", byID.Matches[0].Vector.Id)

	// Update merges setMetadata key by key and replaces values.
	require.NoError(t, idx.UpdateVector(ctx, &pinecone.UpdateVectorRequest{Id: "doc#1", Values: []float32{0, 0, 2},
		Metadata: sdktest.Meta(t, map[string]any{"subject": "carol"})}))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1"})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 2}, *fetched.Vectors["doc#1"].Values)
	assert.Equal(t, "carol", fetched.Vectors["doc#1"].Metadata.Fields["subject"].GetStringValue())
	assert.Equal(t, 2020.0, fetched.Vectors["doc#1"].Metadata.Fields["year"].GetNumberValue())

	// Update by metadata filter.
	upd, err := idx.UpdateVectorsByMetadata(ctx, &pinecone.UpdateVectorsByMetadataRequest{
		Filter: sdktest.Meta(t, map[string]any{"subject": map[string]any{"$eq": "alice"}}), Metadata: sdktest.Meta(t, map[string]any{"reviewed": true})})
	require.NoError(t, err)
	assert.EqualValues(t, 1, upd.MatchedRecords) // doc#3; doc#1 is carol's now

	stats, err := idx.DescribeIndexStats(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 4, stats.TotalVectorCount)
	require.NotNil(t, stats.Dimension)
	assert.EqualValues(t, 3, *stats.Dimension)
	require.Contains(t, stats.Namespaces, "docs")
	assert.EqualValues(t, 4, stats.Namespaces["docs"].VectorCount)
	filtered, err := idx.DescribeIndexStatsFiltered(ctx, sdktest.Meta(t, map[string]any{"reviewed": true}))
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
	require.NoError(t, idx.DeleteVectorsByFilter(ctx, sdktest.Meta(t, map[string]any{"subject": "carol"})))
	fetched, err = idx.FetchVectors(ctx, []string{"doc#1", "doc#2", "doc#3", "other"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"doc#3", "other"}, sdktest.MapKeys(fetched.Vectors))
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
	idx := sdktest.GoIndex(t, url, "any", "", nil)
	ctx := sdktest.Context(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{sdktest.Vec("a", []float32{1, 2}, nil)})
	require.NoError(t, err)
	resp := restJSON(t, url, http.MethodGet, "/vectors/fetch?ids=a", "", nil)
	assert.Contains(t, resp.body, `"a"`)
	resp = restJSON(t, url, http.MethodGet, "/vectors/fetch?ids=a&namespace=__default__", "", nil)
	assert.Contains(t, resp.body, `"a"`)
}

func TestGoSDK_WrongAPIKeyIsUnauthenticated(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	idx := sdktest.GoIndex(t, url, "wrong-key", "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{sdktest.Vec("a", []float32{1}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
}

func TestGoSDK_InvalidArgumentStatus(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{Dimension: 2}, nil)
	idx := sdktest.GoIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{sdktest.Vec("a", []float32{1, 2, 3}, nil)})
	require.Error(t, err)
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "dimension 3 does not match")
}

func TestGoSDK_NestedMetadataIsInvalidArgument(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	idx := sdktest.GoIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{sdktest.Vec("a", []float32{1}, sdktest.Meta(t, map[string]any{"person": map[string]any{"name": "x"}}))})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
}

// Through the SDK, a deleted id stays fetchable, listable and queryable for
// DeleteDelay; a settable clock stands in for the wait.
func TestGoSDK_DeleteDelay(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, url := startEmulator(t, emulator.Config{DeleteDelay: 5 * time.Second, Now: clock.Now}, nil)
	idx := sdktest.GoIndex(t, url, "k", "docs", nil)
	ctx := sdktest.Context(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{sdktest.Vec("a", []float32{1, 0}, nil), sdktest.Vec("b", []float32{0, 1}, nil)})
	require.NoError(t, err)
	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"a"}))

	visible := func() []string {
		fetched, err := idx.FetchVectors(ctx, []string{"a", "b"})
		require.NoError(t, err)
		listed, err := idx.ListVectors(ctx, &pinecone.ListVectorsRequest{})
		require.NoError(t, err)
		assert.Equal(t, sdktest.MapKeys(fetched.Vectors), sdktest.DerefAll(listed.VectorIds))
		queried, err := idx.QueryByVectorValues(ctx, &pinecone.QueryByVectorValuesRequest{Vector: []float32{1, 0}, TopK: 5})
		require.NoError(t, err)
		var ids []string
		for _, m := range queried.Matches {
			ids = append(ids, m.Vector.Id)
		}
		slices.Sort(ids)
		assert.Equal(t, sdktest.MapKeys(fetched.Vectors), ids)
		return sdktest.MapKeys(fetched.Vectors)
	}
	assert.Equal(t, []string{"a", "b"}, visible())
	clock.Advance(5 * time.Second)
	assert.Equal(t, []string{"b"}, visible())
}

func TestGoSDK_DeleteNamespace(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	idx := sdktest.GoIndex(t, url, "k", "gone", nil)
	ctx := sdktest.Context(t)
	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{sdktest.Vec("a", []float32{1}, nil)})
	require.NoError(t, err)
	require.NoError(t, idx.DeleteNamespace(ctx, "gone"))
	fetched, err := idx.FetchVectors(ctx, []string{"a"})
	require.NoError(t, err)
	assert.Empty(t, fetched.Vectors)
	assert.Equal(t, codes.NotFound, status.Code(idx.DeleteNamespace(ctx, "gone")))
}

func TestGoSDK_MessageOverLimitIsResourceExhausted(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{MaxRequestBytes: 4096}, nil)
	idx := sdktest.GoIndex(t, url, "k", "docs", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{sdktest.Vec("big", make([]float32, 2000), nil)})
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}

// Over TLS the SDK's gRPC calls negotiate h2 through ALPN and its REST
// UpsertRecords (always https) uses HTTP/1.1 or h2 on the same port.
func TestGoSDK_GRPCAndRESTOverTLS(t *testing.T) {
	cert := sdktest.NewCert(t, "pinecone emulator test")
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, cert.Server)
	rest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Roots}}}
	idx := sdktest.GoIndex(t, url, testAPIKey, "records", rest,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: cert.Roots})))
	ctx := sdktest.Context(t)

	_, err := idx.UpsertVectors(ctx, []*pinecone.Vector{sdktest.Vec("v1", []float32{1, 2}, sdktest.Meta(t, map[string]any{"subject": "dan"}))})
	require.NoError(t, err)
	// UpsertRecords does not check the HTTP status, so the fetch below is the proof.
	require.NoError(t, idx.UpsertRecords(ctx, []*pinecone.IntegratedRecord{
		{"_id": "r1", "chunk_text": "hello", "subject": "erin"},
		{"id": "r2", "chunk_text": "world", "subject": "frank"},
	}))
	fetched, err := idx.FetchVectors(ctx, []string{"v1", "r1", "r2"})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"v1", "r1", "r2"}, sdktest.MapKeys(fetched.Vectors))
	assert.Equal(t, map[string]any{"chunk_text": "hello", "subject": "erin"}, fetched.Vectors["r1"].Metadata.AsMap())
	assert.Equal(t, "world", fetched.Vectors["r2"].Metadata.Fields["chunk_text"].GetStringValue())
}
