package emulator

import (
	"net/http"
	"strconv"
	"strings"
)

// namespaceRequest names one namespace: DescribeNamespaceRequest{namespace=1},
// DeleteNamespaceRequest{namespace=1}, and /namespaces/{namespace} in REST.
type namespaceRequest struct {
	Namespace string
}

func namespaceFromProto(b []byte) (namespaceRequest, error) {
	var req namespaceRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		if f.num == 1 {
			if req.Namespace, err = f.str(); err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

func namespaceFromREST(r *http.Request, _ []byte) (namespaceRequest, error) {
	return namespaceRequest{Namespace: r.PathValue("namespace")}, nil
}

// namespaceDescription is NamespaceDescription{name=1, record_count=2} and
// {"name", "recordCount"}.
type namespaceDescription struct {
	lsnStamp
	namespaceCount
}

func (d namespaceDescription) proto() []byte {
	return appendVarint(appendString(nil, 1, d.Name), 2, uint64(d.Count))
}

func (d namespaceDescription) json() any {
	return map[string]any{"name": d.Name, "recordCount": d.Count}
}

func (s *Server) describeNamespace(req namespaceRequest) (namespaceDescription, error) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	recs := st.live(ns)
	if recs == nil {
		return namespaceDescription{}, errorf(NotFound, "Namespace %q not found", req.Namespace)
	}
	return namespaceDescription{readStamp(st.maxIndexedLSN(ns)), namespaceCount{Name: ns, Count: uint32(len(recs))}}, nil
}

// deleteNamespace deletes every record of a namespace (with DeleteDelay, like
// any delete); a namespace that does not exist is NotFound.
func (s *Server) deleteNamespace(req namespaceRequest) (emptyResponse, error) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	recs := st.live(ns)
	if recs == nil {
		return emptyResponse{}, errorf(NotFound, "Namespace %q not found", req.Namespace)
	}
	doomed := make([]*record, 0, len(recs))
	for _, r := range recs {
		doomed = append(doomed, r)
	}
	return emptyResponse{writeStamp(st.remove(ns, doomed))}, nil
}

// listNamespacesRequest is ListNamespacesRequest{pagination_token=1,
// limit=2, prefix=3} and GET /namespaces?limit&paginationToken&prefix; it
// pages like List, through the same token format.
type listNamespacesRequest = listRequest

func listNamespacesFromProto(b []byte) (listNamespacesRequest, error) {
	var req listNamespacesRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			req.PaginationToken, err = f.str()
		case 2:
			req.Limit, err = f.uint32()
		case 3:
			req.Prefix, err = f.str()
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func listNamespacesFromREST(r *http.Request, _ []byte) (listNamespacesRequest, error) {
	q := r.URL.Query()
	req := listNamespacesRequest{Prefix: q.Get("prefix"), PaginationToken: q.Get("paginationToken")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseUint(l, 10, 32)
		if err != nil {
			return req, errorf(InvalidArgument, "limit %q is not a positive integer", l)
		}
		req.Limit = uint32(n)
	}
	return req, nil
}

// listNamespacesResponse is ListNamespacesResponse{namespaces=1,
// pagination=2, total_count=3} and its REST twin.
type listNamespacesResponse struct {
	lsnStamp
	Namespaces []namespaceCount
	Next       string
	Total      int
}

func (r listNamespacesResponse) proto() []byte {
	var b []byte
	for _, ns := range r.Namespaces {
		b = appendMessage(b, 1, namespaceDescription{namespaceCount: ns}.proto())
	}
	if r.Next != "" {
		b = appendMessage(b, 2, appendString(nil, 1, r.Next))
	}
	return appendVarint(b, 3, uint64(r.Total))
}

func (r listNamespacesResponse) json() any {
	list := make([]any, 0, len(r.Namespaces))
	for _, ns := range r.Namespaces {
		list = append(list, namespaceDescription{namespaceCount: ns}.json())
	}
	out := map[string]any{"namespaces": list, "totalCount": r.Total}
	if r.Next != "" {
		out["pagination"] = map[string]string{"next": r.Next}
	}
	return out
}

// listNamespaces pages through the namespaces holding visible records, in
// name order, with the same token format as List.
func (s *Server) listNamespaces(req listNamespacesRequest) (listNamespacesResponse, error) {
	after, err := decodePageToken(req.PaginationToken)
	if err != nil {
		return listNamespacesResponse{}, err
	}
	stats, err := s.describeIndexStats(statsRequest{})
	if err != nil {
		return listNamespacesResponse{}, err
	}
	limit := int(req.Limit)
	if limit == 0 {
		limit = defaultListLimit
	}
	resp := listNamespacesResponse{lsnStamp: stats.lsnStamp}
	for _, ns := range stats.Namespaces {
		if !strings.HasPrefix(ns.Name, req.Prefix) {
			continue
		}
		resp.Total++
		if ns.Name > after {
			resp.Namespaces = append(resp.Namespaces, ns)
		}
	}
	if len(resp.Namespaces) > limit {
		resp.Namespaces = resp.Namespaces[:limit]
		resp.Next = encodePageToken(resp.Namespaces[limit-1].Name)
	}
	return resp, nil
}
