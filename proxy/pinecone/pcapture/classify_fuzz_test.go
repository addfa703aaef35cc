package pcapture

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// FuzzClassify checks, for any request-target, method, API version and
// content type: a target starting with "//" is always refused; nothing
// that a cleaning, lower-casing upstream would route to a write passes
// untouched; and a request passes untouched only if it is on the
// allow-list.
func FuzzClassify(f *testing.F) {
	for _, s := range [][4]string{
		{"POST", "//evil/vectors/upsert", "", "application/json"},
		{"POST", "//x/records/namespaces/n/upsert", "2025-10", ""},
		{"POST", "/records/namespaces//upsert", "2025-01", "application/x-ndjson"},
		{"POST", "/records/namespaces/a%2Fb/upsert", "", ""},
		{"POST", "/namespaces/n/documents/upsert", "2026-07", "application/json"},
		{"POST", "/vectors/upsert", "2026-07", "application/json"},
		{"GET", "/vectors/fetch?ids=a", "2026-07", ""},
		{"POST", "/VectorService/Upsert", "2025-10", "application/grpc"},
		{"POST", "/VectorService/UpdateByMetadata", "", "application/grpc"},
		{"PUT", "/Vectors/Upsert/", "", ""},
		{"OPTIONS", "/x/../vectors/delete", "", ""},
		{"CONNECT", "/", "", ""},
		{"POST", "/vectors/upsert;x", "", "application/json"},
		{"POST", "/vectors;v=1/update.", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, method, target, version, contentType string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || method == "" {
			return
		}
		r := &http.Request{Method: method, URL: u, Header: http.Header{}, ProtoMajor: 2}
		if version != "" {
			r.Header.Set(versionHeader, version)
		}
		r.Header.Set("Content-Type", contentType)
		w := classify(r)
		if strings.HasPrefix(u.Path, "//") && w.op != opNonCanonical {
			t.Fatalf("%q classified %d, not refused", target, w.op)
		}
		if w.op != opNone {
			return
		}
		segments, ok := pathSegments(r)
		if !ok || !isPass(r, segments, pinecone.IsGRPC(r)) {
			t.Fatalf("%s %q passes untouched but is not on the allow-list", method, target)
		}
		c := strings.ToLower(path.Clean("/" + u.Path))
		switch {
		case c == pathUpsert, c == pathUpdate, c == pathDelete, strings.EqualFold(c, grpcUpsert),
			strings.EqualFold(c, grpcUpdate), strings.EqualFold(c, grpcDelete):
			t.Fatalf("%s %q passes untouched but cleans to a write path", method, target)
		}
	})
}
