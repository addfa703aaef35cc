package emulator

import (
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// deleteRequest is DeleteRequest{ids=1, delete_all=2, namespace=3, filter=4}
// and POST /vectors/delete {"ids", "deleteAll", "namespace", "filter"}.
type deleteRequest struct {
	Namespace string
	IDs       []string
	DeleteAll bool
	Filter    map[string]any
}

func deleteFromProto(b []byte) (deleteRequest, error) {
	var req deleteRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			var id string
			if id, err = f.str(); err == nil {
				req.IDs = append(req.IDs, id)
			}
		case 2:
			req.DeleteAll, err = f.boolean()
		case 3:
			req.Namespace, err = f.str()
		case 4:
			if err = f.want(protowire.BytesType); err == nil {
				req.Filter, err = decodeStruct(f.bytes, 0)
			}
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func deleteFromREST(_ *http.Request, body []byte) (deleteRequest, error) {
	var in struct {
		IDs       []string       `json:"ids"`
		DeleteAll bool           `json:"deleteAll"`
		Namespace string         `json:"namespace"`
		Filter    map[string]any `json:"filter"`
	}
	err := decodeJSONBody(body, &in)
	return deleteRequest{Namespace: in.Namespace, IDs: in.IDs, DeleteAll: in.DeleteAll, Filter: in.Filter}, err
}

// emptyResponse is an empty message and the REST body {}.
type emptyResponse struct{ lsnStamp }

func (emptyResponse) proto() []byte { return nil }
func (emptyResponse) json() any     { return map[string]any{} }

// delete removes records by ids, by filter, or all of a namespace; exactly
// one of the three must be given. Missing ids are not an error.
func (s *Server) delete(req deleteRequest) (emptyResponse, error) {
	given := 0
	for _, b := range []bool{len(req.IDs) > 0, req.DeleteAll, req.Filter != nil} {
		if b {
			given++
		}
	}
	if given != 1 {
		return emptyResponse{}, errorf(InvalidArgument, "Delete takes exactly one of ids, deleteAll or filter; %d were given", given)
	}
	var match matcher
	if req.Filter != nil {
		if len(req.Filter) == 0 {
			return emptyResponse{}, errorf(InvalidArgument, "Delete by filter needs a non-empty filter; use deleteAll to empty a namespace")
		}
		var err error
		if match, err = compileFilter(req.Filter); err != nil {
			return emptyResponse{}, err
		}
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	var doomed []*record
	if len(req.IDs) > 0 {
		for _, id := range req.IDs {
			if r := st.lookup(ns, id); r != nil {
				doomed = append(doomed, r)
			}
		}
	} else {
		for _, r := range st.live(ns) {
			if match == nil || match(r.Metadata) {
				doomed = append(doomed, r)
			}
		}
	}
	return emptyResponse{writeStamp(st.remove(ns, doomed))}, nil
}
