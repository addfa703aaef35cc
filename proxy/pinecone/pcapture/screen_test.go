package pcapture_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// The Hook wants the body of every request it may record or refuse, and
// no other: reads, and every request to an index without rules, pass the
// relay as a plain reverse proxy passes them; for those, Request would
// have let them through untouched whatever their body.
func TestHook_WantsTheRequestsItMayRecordOrRefuse(t *testing.T) {
	r := newRig(t, rigOptions{mode: "strict"})
	docs, other := &pinecone.Index{Name: "docs"}, &pinecone.Index{Name: "other"}
	cases := []struct {
		name   string
		index  *pinecone.Index
		method string
		path   string
		grpc   bool
		wants  bool
	}{
		{"REST query", docs, http.MethodPost, "/query", false, false},
		{"REST records search", docs, http.MethodPost, "/records/namespaces/n/search", false, false},
		{"REST documents search", docs, http.MethodPost, "/namespaces/n/documents/search", false, false},
		{"gRPC query", docs, http.MethodPost, "/VectorService/Query", true, false},
		{"gRPC fetch", docs, http.MethodPost, "/VectorService/Fetch", true, false},
		{"REST upsert to an index without rules", other, http.MethodPost, "/vectors/upsert", false, false},
		{"gRPC upsert to an index without rules", other, http.MethodPost, "/VectorService/Upsert", true, false},
		{"REST upsert", docs, http.MethodPost, "/vectors/upsert", false, true},
		{"REST records upsert", docs, http.MethodPost, "/records/namespaces/n/upsert", false, true},
		{"REST documents update", docs, http.MethodPost, "/namespaces/n/documents/update", false, true},
		{"gRPC upsert", docs, http.MethodPost, "/VectorService/Upsert", true, true},
		{"gRPC namespace delete", docs, http.MethodPost, "/VectorService/DeleteNamespace", true, true},
		{"an unknown path", docs, http.MethodPost, "/vectors/upsert_many", false, true},
		{"a write path spelled differently", docs, http.MethodPost, "/Vectors/Upsert", false, true},
		{"an authority path", docs, http.MethodPost, "//evil.example/vectors/upsert", false, true},
		{"a gRPC write method called over HTTP/1.1", docs, http.MethodPost, "/VectorService/Upsert", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "http://docs"+c.path, strings.NewReader(`{"namespace":"n"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if c.grpc {
				req.ProtoMajor, req.ProtoMinor = 2, 0
				req.Header.Set("Content-Type", "application/grpc")
			}
			assert.Equal(t, c.wants, r.hook.Wants(c.index, req))
			if !c.wants {
				call, err := r.hook.Request(c.index, req, []byte(`{"namespace":"n","vectors":[{"id":"v","values":[1],"metadata":{"user_id":"alice"}}]}`))
				assert.NoError(t, err, "a request the Hook does not want passes untouched")
				assert.Nil(t, call, "a request the Hook does not want has nothing to settle")
			}
		})
	}
}
