package emulator

import (
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// upsertRequest is UpsertRequest{vectors=1, namespace=2} and
// POST /vectors/upsert {"vectors": [...], "namespace": "..."}.
type upsertRequest struct {
	Namespace string
	Vectors   []Vector
}

func upsertFromProto(b []byte) (upsertRequest, error) {
	var req upsertRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			if err = f.want(protowire.BytesType); err != nil {
				return req, err
			}
			v, err := decodeVector(f.bytes)
			if err != nil {
				return req, err
			}
			req.Vectors = append(req.Vectors, v)
		case 2:
			if req.Namespace, err = f.str(); err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

func upsertFromREST(_ *http.Request, body []byte) (upsertRequest, error) {
	var in struct {
		Vectors   []jsonVector `json:"vectors"`
		Namespace string       `json:"namespace"`
	}
	if err := decodeJSONBody(body, &in); err != nil {
		return upsertRequest{}, err
	}
	req := upsertRequest{Namespace: in.Namespace}
	for _, v := range in.Vectors {
		req.Vectors = append(req.Vectors, v.vector())
	}
	return req, nil
}

// upsertResponse is UpsertResponse{upserted_count=1} and {"upsertedCount": n}.
type upsertResponse struct {
	lsnStamp
	UpsertedCount uint32
}

func (r upsertResponse) proto() []byte { return appendVarint(nil, 1, uint64(r.UpsertedCount)) }
func (r upsertResponse) json() any {
	return map[string]any{"upsertedCount": r.UpsertedCount}
}

// upsert writes every vector or, if one is invalid, none.
func (s *Server) upsert(req upsertRequest) (upsertResponse, error) {
	if len(req.Vectors) == 0 {
		return upsertResponse{}, errorf(InvalidArgument, "No vectors provided: send at least one vector to upsert")
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, v := range req.Vectors {
		if err := checkVector(v); err != nil {
			return upsertResponse{}, err
		}
		if len(v.Values) == 0 && v.Sparse == nil {
			return upsertResponse{}, errorf(InvalidArgument, "Vector %q has neither dense nor sparse values", v.ID)
		}
		if err := st.checkDimension(v.ID, v.Values); err != nil {
			return upsertResponse{}, err
		}
	}
	ns := canonicalNamespace(req.Namespace)
	for _, v := range req.Vectors {
		st.put(ns, v)
	}
	return upsertResponse{lsnStamp: writeStamp(st.nextLSN(ns)), UpsertedCount: uint32(len(req.Vectors))}, nil
}
