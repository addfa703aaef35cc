package emulator

import (
	"net/http"
)

// fetchRequest is FetchRequest{ids=1, namespace=2} and
// GET /vectors/fetch?ids=a&ids=b&namespace=ns.
type fetchRequest struct {
	Namespace string
	IDs       []string
}

func fetchFromProto(b []byte) (fetchRequest, error) {
	var req fetchRequest
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
			req.Namespace, err = f.str()
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func fetchFromREST(r *http.Request, _ []byte) (fetchRequest, error) {
	q := r.URL.Query()
	return fetchRequest{Namespace: q.Get("namespace"), IDs: q["ids"]}, nil
}

// fetchResponse is FetchResponse{vectors=1 map<string, Vector>, namespace=2,
// usage=3} and {"vectors": {id: vector}, "namespace", "usage"}.
type fetchResponse struct {
	lsnStamp
	Namespace string
	Vectors   []Vector
}

func (r fetchResponse) proto() []byte {
	var b []byte
	for _, v := range r.Vectors {
		entry := appendString(nil, 1, v.ID)
		entry = appendMessage(entry, 2, encodeVector(v))
		b = appendMessage(b, 1, entry)
	}
	b = appendString(b, 2, r.Namespace)
	return appendMessage(b, 3, encodeUsage(1))
}

func (r fetchResponse) json() any {
	vectors := map[string]jsonVector{}
	for _, v := range r.Vectors {
		vectors[v.ID] = toJSONVector(v)
	}
	return map[string]any{"vectors": vectors, "namespace": r.Namespace, "usage": jsonUsage{ReadUnits: 1}}
}

// fetch returns the visible records among the ids; missing ids are left out.
func (s *Server) fetch(req fetchRequest) (fetchResponse, error) {
	if len(req.IDs) == 0 {
		return fetchResponse{}, errorf(InvalidArgument, "No IDs provided for fetch query: pass at least one id")
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := fetchResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), Namespace: req.Namespace}
	ns := canonicalNamespace(req.Namespace)
	for _, id := range req.IDs {
		if r := st.lookup(ns, id); r != nil {
			resp.Vectors = append(resp.Vectors, r.Vector)
		}
	}
	return resp, nil
}
