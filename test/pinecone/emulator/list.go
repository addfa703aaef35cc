package emulator

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// defaultListLimit is the page size when a List request gives none.
const defaultListLimit = 100

// listRequest is ListRequest{prefix=1, limit=2, pagination_token=3,
// namespace=4} and GET /vectors/list?prefix&limit&paginationToken&namespace.
type listRequest struct {
	Namespace       string
	Prefix          string
	Limit           uint32
	PaginationToken string
}

func listFromProto(b []byte) (listRequest, error) {
	var req listRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			req.Prefix, err = f.str()
		case 2:
			req.Limit, err = f.uint32()
		case 3:
			req.PaginationToken, err = f.str()
		case 4:
			req.Namespace, err = f.str()
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func listFromREST(r *http.Request, _ []byte) (listRequest, error) {
	q := r.URL.Query()
	req := listRequest{Namespace: q.Get("namespace"), Prefix: q.Get("prefix"), PaginationToken: q.Get("paginationToken")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseUint(l, 10, 32)
		if err != nil {
			return req, errorf(InvalidArgument, "limit %q is not a positive integer", l)
		}
		req.Limit = uint32(n)
	}
	return req, nil
}

// listResponse is ListResponse{vectors=1 (ListItem{id=1}), pagination=2
// (Pagination{next=1}), namespace=3, usage=4} and its REST twin.
type listResponse struct {
	lsnStamp
	Namespace string
	IDs       []string
	Next      string
}

func (r listResponse) proto() []byte {
	var b []byte
	for _, id := range r.IDs {
		b = appendMessage(b, 1, appendString(nil, 1, id))
	}
	if r.Next != "" {
		b = appendMessage(b, 2, appendString(nil, 1, r.Next))
	}
	b = appendString(b, 3, r.Namespace)
	return appendMessage(b, 4, encodeUsage(1))
}

func (r listResponse) json() any {
	items := make([]map[string]string, 0, len(r.IDs))
	for _, id := range r.IDs {
		items = append(items, map[string]string{"id": id})
	}
	out := map[string]any{"vectors": items, "namespace": r.Namespace, "usage": jsonUsage{ReadUnits: 1}}
	if r.Next != "" {
		out["pagination"] = map[string]string{"next": r.Next}
	}
	return out
}

// list pages through the visible ids with the prefix in id order. The
// pagination token is opaque to clients: it encodes the last id returned.
func (s *Server) list(req listRequest) (listResponse, error) {
	limit := int(req.Limit)
	if limit == 0 {
		limit = defaultListLimit
	}
	after, err := decodePageToken(req.PaginationToken)
	if err != nil {
		return listResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := listResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), Namespace: req.Namespace}
	var ids []string
	for id := range st.live(canonicalNamespace(req.Namespace)) {
		if strings.HasPrefix(id, req.Prefix) && id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
		resp.Next = encodePageToken(ids[limit-1])
	}
	resp.IDs = ids
	return resp, nil
}

// encodePageToken makes the opaque pagination token that resumes after name.
func encodePageToken(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name))
}

// decodePageToken returns the name a pagination token resumes after; the
// empty token starts at the beginning.
func decodePageToken(token string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", errorf(InvalidArgument, "invalid pagination token %q: pass the token from the previous page unchanged", token)
	}
	return string(raw), nil
}
