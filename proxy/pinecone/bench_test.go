package pinecone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// BenchmarkUpsert sends upserts of 100 vectors of 1536 dimensions with
// metadata, over REST (JSON) and gRPC (go-pinecone), from GOMAXPROCS
// concurrent clients: direct to the emulator, through a plain
// httputil.ReverseProxy (the floor for any relay) and through the relay.
// Compare ns/op across the three for each protocol:
//
//	go test -run '^$' -bench Upsert -benchtime 200x ./proxy/pinecone
func BenchmarkUpsert(b *testing.B) {
	const vectors, dims = 100, 1536
	upstream, _ := startEmulator(b, emulator.Config{}, nil)
	targets := []struct{ name, url string }{
		{"direct", upstream},
		{"plain-reverseproxy", serveHTTP(b, plainReverseProxy(b, upstream), nil)},
		{"lethe-relay", startRelay(b, pinecone.Config{Indexes: []*pinecone.Index{index(b, "docs", upstream, nil)}}, nil)},
	}

	type restVector struct {
		ID       string         `json:"id"`
		Values   []float32      `json:"values"`
		Metadata map[string]any `json:"metadata"`
	}
	var restVectors []restVector
	var grpcVectors []*gopinecone.Vector
	for i := range vectors {
		values := make([]float32, dims)
		for j := range values {
			values[j] = float32((i*dims+j)%997) / 997
		}
		md := map[string]any{"user_id": fmt.Sprintf("user-%d", i%7), "source": "bench", "page": i}
		restVectors = append(restVectors, restVector{fmt.Sprintf("v%d", i), values, md})
		s, err := structpb.NewStruct(md)
		if err != nil {
			b.Fatal(err)
		}
		grpcVectors = append(grpcVectors, &gopinecone.Vector{Id: fmt.Sprintf("v%d", i), Values: &values, Metadata: s})
	}
	restBody, err := json.Marshal(map[string]any{"vectors": restVectors, "namespace": "bench"})
	if err != nil {
		b.Fatal(err)
	}

	for _, target := range targets {
		b.Run("rest/"+target.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.SetBytes(int64(len(restBody)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Post(target.url+"/vectors/upsert", "application/json", bytes.NewReader(restBody))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
		b.Run("grpc/"+target.name, func(b *testing.B) {
			pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: target.url, Namespace: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer idx.Close()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := idx.UpsertVectors(context.Background(), grpcVectors); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// plainReverseProxy is the least a relay must do: httputil.ReverseProxy
// with gRPC sent over h2c and REST over HTTP/1.1.
func plainReverseProxy(b *testing.B, upstream string) http.Handler {
	u, err := url.Parse(upstream)
	if err != nil {
		b.Fatal(err)
	}
	var h1, h2c http.Protocols
	h1.SetHTTP1(true)
	h2c.SetUnencryptedHTTP2(true)
	rest := &http.Transport{Protocols: &h1, MaxIdleConnsPerHost: 64}
	grpc := &http.Transport{Protocols: &h2c}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.ProtoMajor == 2 && r.Header.Get("Content-Type") == "application/grpc" {
				return grpc.RoundTrip(r)
			}
			return rest.RoundTrip(r)
		}),
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
