package pcapture

import (
	"net/http"
	"net/url"
	"strings"
)

// The data plane's requests that write nothing Lethe records: reads, and
// operations that add no personal data (creating a namespace, cancelling
// an import). Deleting a namespace adds none either, but classify reads it
// first (opNamespaceDelete), to mark its records deleted. Everything here passes untouched; a request that
// is neither here nor a write classify knows is unknown (see classify).
// The list is Pinecone's data plane as go-pinecone v5 (API 2025-10), the
// Node SDK 5.x (2025-01) and 9.x (2026-07, with the documents reads) call it, plus the control plane's index
// descriptions, which the Node SDK asks the proxy for when its
// controllerHostUrl names it.

// restRoute is a REST request by method and path; "{}" in a path is one
// segment of any value (a namespace, an import id, an index name).
type restRoute struct {
	method string
	path   string
}

var passRoutes = []restRoute{
	{http.MethodGet, "/vectors/fetch"},
	{http.MethodGet, "/vectors/list"},
	{http.MethodPost, "/vectors/fetch_by_metadata"},
	{http.MethodPost, "/query"},
	{http.MethodGet, "/describe_index_stats"},
	{http.MethodPost, "/describe_index_stats"},
	{http.MethodPost, "/records/namespaces/{}/search"},
	{http.MethodPost, "/namespaces/{}/documents/fetch"}, // API 2026-07's documents reads
	{http.MethodPost, "/namespaces/{}/documents/list"},  //
	{http.MethodPost, "/namespaces/{}/documents/search"},
	{http.MethodGet, "/namespaces"},
	{http.MethodPost, "/namespaces"},        // create a namespace: no records
	{http.MethodGet, "/namespaces/{}"},      //
	{http.MethodDelete, "/namespaces/{}"},   // classify reads it first (opNamespaceDelete); listed for OPTIONS
	{http.MethodGet, "/bulk/imports"},       //
	{http.MethodGet, "/bulk/imports/{}"},    //
	{http.MethodDelete, "/bulk/imports/{}"}, // cancel an import
	{http.MethodGet, "/indexes"},            // control plane, read
	{http.MethodGet, "/indexes/{}"},         //
}

// The gRPC methods of VectorService that pass untouched.
var passMethods = map[string]bool{
	"/VectorService/Fetch":              true,
	"/VectorService/FetchByMetadata":    true,
	"/VectorService/List":               true,
	"/VectorService/Query":              true,
	"/VectorService/DescribeIndexStats": true,
	"/VectorService/ListNamespaces":     true,
	"/VectorService/DescribeNamespace":  true,
	"/VectorService/CreateNamespace":    true,
}

// isPass reports whether r is one of the requests that pass untouched.
// HEAD is GET without a body; OPTIONS (a CORS preflight) writes nothing
// on a path that is a known request for some method.
func isPass(r *http.Request, segments []string, grpc bool) bool {
	if grpc {
		return passMethods[r.URL.Path]
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	for _, rt := range passRoutes {
		if (rt.method == method || method == http.MethodOptions) && matchSegments(rt.path, segments) {
			return true
		}
	}
	return false
}

// pathSegments splits r's path as sent (escaped) into its segments,
// each unescaped; ok is false when one cannot be unescaped.
func pathSegments(r *http.Request) (segments []string, ok bool) {
	segments = strings.Split(r.URL.EscapedPath(), "/")
	for i, s := range segments {
		if !strings.Contains(s, "%") {
			continue
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		segments[i] = u
	}
	return segments, true
}

// matchSegments reports whether segments match pattern segment by
// segment; "{}" matches any one segment, the empty one included.
func matchSegments(pattern string, segments []string) bool {
	for i := range len(segments) {
		seg, rest, found := strings.Cut(pattern, "/")
		if seg != "{}" && seg != segments[i] {
			return false
		}
		if !found {
			return i == len(segments)-1
		}
		pattern = rest
	}
	return false
}

// pathWords are the segments of Pinecone's API paths (and of the API
// version 2026-07's document paths); pathPattern keeps them and hides
// every other segment.
var pathWords = map[string]bool{
	"vectors": true, "records": true, "namespaces": true, "documents": true, "upsert": true,
	"update": true, "delete": true, "fetch": true, "list": true, "search": true, "query": true,
	"describe_index_stats": true, "fetch_by_metadata": true, "bulk": true, "imports": true,
	"indexes": true, "VectorService": true,
}

// pathPattern is segments with every segment that is not a word of
// Pinecone's paths shown as "*", so that a message or log can name the
// request's shape without its namespace, ids or anything a client put
// there.
func pathPattern(segments []string) string {
	out := make([]string, len(segments))
	for i, s := range segments {
		switch {
		case s == "":
		case pathWords[s]:
			out[i] = s
		case i == len(segments)-1 && len(segments) > 2 && segments[1] == "VectorService" && isWord(s):
			out[i] = s // a gRPC method name
		default:
			out[i] = "*"
		}
	}
	return strings.Join(out, "/")
}

// isWord reports whether s is a short identifier.
func isWord(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
