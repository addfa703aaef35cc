package emulator

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// restRoute is one REST endpoint: its method, its path with {wildcard}
// segments, its operation and its success status.
type restRoute struct {
	method  string
	path    string
	name    string
	op      operation
	success int
}

var restRoutes = []restRoute{
	{http.MethodPost, "/vectors/upsert", "Upsert", op(nil, upsertFromREST, (*Server).upsert), http.StatusOK},
	{http.MethodPost, "/vectors/update", "Update", op(nil, updateFromREST, (*Server).update), http.StatusOK},
	{http.MethodPost, "/vectors/delete", "Delete", op(nil, deleteFromREST, (*Server).delete), http.StatusOK},
	{http.MethodGet, "/vectors/fetch", "Fetch", op(nil, fetchFromREST, (*Server).fetch), http.StatusOK},
	{http.MethodGet, "/vectors/list", "List", op(nil, listFromREST, (*Server).list), http.StatusOK},
	{http.MethodPost, "/query", "Query", op(nil, queryFromREST, (*Server).query), http.StatusOK},
	{http.MethodPost, "/describe_index_stats", "DescribeIndexStats", op(nil, statsFromREST, (*Server).describeIndexStats), http.StatusOK},
	{http.MethodGet, "/describe_index_stats", "DescribeIndexStats", op(nil, statsFromREST, (*Server).describeIndexStats), http.StatusOK},
	{http.MethodPost, "/records/namespaces/{namespace}/upsert", "UpsertRecords", op(nil, upsertRecordsFromREST, (*Server).upsertRecords), http.StatusCreated},
	{http.MethodPost, "/records/namespaces/{namespace}/search", "SearchRecords", op(nil, searchRecordsFromREST, (*Server).searchRecords), http.StatusOK},
	{http.MethodGet, "/namespaces", "ListNamespaces", op(nil, listNamespacesFromREST, (*Server).listNamespaces), http.StatusOK},
	{http.MethodGet, "/namespaces/{namespace}", "DescribeNamespace", op(nil, namespaceFromREST, (*Server).describeNamespace), http.StatusOK},
	{http.MethodDelete, "/namespaces/{namespace}", "DeleteNamespace", op(nil, namespaceFromREST, (*Server).deleteNamespace), http.StatusAccepted},
	{http.MethodPost, "/namespaces/{namespace}/documents/upsert", "UpsertDocuments", op(nil, upsertDocumentsFromREST, (*Server).upsertDocuments), http.StatusAccepted},
	{http.MethodPost, "/namespaces/{namespace}/documents/update", "UpdateDocuments", op(nil, updateDocumentsFromREST, (*Server).updateDocuments), http.StatusOK},
	{http.MethodPost, "/namespaces/{namespace}/documents/delete", "DeleteDocuments", op(nil, deleteDocumentsFromREST, (*Server).deleteDocuments), http.StatusOK},
	{http.MethodPost, "/namespaces/{namespace}/documents/fetch", "FetchDocuments", op(nil, fetchDocumentsFromREST, (*Server).fetchDocuments), http.StatusOK},
	{http.MethodPost, "/namespaces/{namespace}/documents/list", "ListDocuments", op(nil, listDocumentsFromREST, (*Server).listDocuments), http.StatusOK},
	{http.MethodPost, "/namespaces/{namespace}/documents/search", "SearchDocuments", op(nil, searchDocumentsFromREST, (*Server).searchDocuments), http.StatusOK},
	{http.MethodGet, "/indexes/{name}", "DescribeIndex", op(nil, describeIndexFromREST, (*Server).describeIndex), http.StatusOK},
	{http.MethodGet, "/indexes", "ListIndexes", op(nil, listIndexesFromREST, (*Server).listIndexes), http.StatusOK},
}

// matchRoute finds the route for r and records its {wildcard} segments as
// path values. It splits the escaped path itself rather than using
// http.ServeMux, which would redirect the Node SDK's
// /records/namespaces//upsert (the default namespace as an empty segment)
// to a cleaned path.
func matchRoute(r *http.Request) (route *restRoute, pathFound bool) {
	got := strings.Split(r.URL.EscapedPath(), "/")
	for i := range restRoutes {
		rt := &restRoutes[i]
		want := strings.Split(rt.path, "/")
		if len(want) != len(got) {
			continue
		}
		values, ok := map[string]string{}, true
		for j := range want {
			if name, isWildcard := strings.CutPrefix(want[j], "{"); isWildcard {
				v, err := url.PathUnescape(got[j])
				values[strings.TrimSuffix(name, "}")], ok = v, ok && err == nil
			} else if want[j] != got[j] {
				ok = false
			}
		}
		if !ok {
			continue
		}
		pathFound = true
		if rt.method == r.Method {
			for k, v := range values {
				r.SetPathValue(k, v)
			}
			return rt, true
		}
	}
	return nil, pathFound
}

// serveREST answers one REST request with JSON.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	rt, pathFound := matchRoute(r)
	if rt == nil {
		e := errorf(NotFound, "no REST endpoint %s %s", r.Method, r.URL.Path)
		if pathFound {
			e = &Error{Code: Unimplemented, Message: "method " + r.Method + " is not allowed on " + r.URL.Path, HTTPStatus: http.StatusMethodNotAllowed}
		}
		s.restError(w, "", e)
		return
	}
	if !s.authorized(r.Header) {
		s.restError(w, rt.name, errorf(Unauthenticated, "Invalid API key: send the index's key in the Api-Key header"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.restError(w, rt.name, tooLarge(s.cfg.MaxRequestBytes))
		} else {
			s.restError(w, rt.name, errorf(InvalidArgument, "reading the request body: %v", err))
		}
		return
	}
	req, err := rt.op.fromREST(r, body)
	if err != nil {
		s.restError(w, rt.name, err)
		return
	}
	resp, err := rt.op.run(s, req)
	if err != nil {
		s.restError(w, rt.name, err)
		return
	}
	stamp := resp.stamp()
	w.Header().Set(stamp.header, strconv.FormatUint(stamp.value, 10))
	out := resp.json()
	if out == nil {
		w.WriteHeader(rt.success)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rt.success)
	_ = json.NewEncoder(w).Encode(out)
}

// restError writes Pinecone's data-plane error body
// {"code": <gRPC code>, "message": "...", "details": []}.
func (s *Server) restError(w http.ResponseWriter, operation string, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = errorf(Internal, "%v", err)
	}
	s.cfg.Logger.Info("pinecone emulator refused a request", "protocol", "rest", "operation", operation, "code", int(e.Code))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.httpStatus())
	if operation == "DescribeIndex" || operation == "ListIndexes" {
		_ = json.NewEncoder(w).Encode(controlPlaneError(e))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"code": e.Code, "message": e.Message, "details": []any{}})
}

// authorized reports whether the request carries the configured API key.
func (s *Server) authorized(h http.Header) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(h.Get("Api-Key")), []byte(s.cfg.APIKey)) == 1
}
