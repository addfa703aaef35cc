package sdktest

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// GoIndex connects go-pinecone v5 to the index at host: its data-plane
// calls are gRPC (cleartext for http://, TLS for https://, as dialOpts
// say); restClient serves its REST calls, which always use https.
func GoIndex(t testing.TB, host, apiKey, namespace string, restClient *http.Client, dialOpts ...grpc.DialOption) *pinecone.IndexConnection {
	t.Helper()
	pc, err := pinecone.NewClient(pinecone.NewClientParams{ApiKey: apiKey, RestClient: restClient})
	require.NoError(t, err)
	idx, err := pc.Index(pinecone.NewIndexConnParams{Host: host, Namespace: namespace}, dialOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

// Meta is m as record metadata.
func Meta(t testing.TB, m map[string]any) *pinecone.Metadata {
	t.Helper()
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

// Vec is a dense vector record.
func Vec(id string, values []float32, md *pinecone.Metadata) *pinecone.Vector {
	return &pinecone.Vector{Id: id, Values: &values, Metadata: md}
}

// Context bounds one test's SDK calls.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// DerefAll is the strings ps point at.
func DerefAll(ps []*string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, *p)
	}
	return out
}

// MapKeys is m's keys, sorted.
func MapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
