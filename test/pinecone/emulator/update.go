package emulator

import (
	"maps"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// updateRequest is UpdateRequest{id=1, values=2, set_metadata=3, namespace=4,
// sparse_values=5, filter=6, dry_run=7} and POST /vectors/update with the
// same fields in camelCase.
type updateRequest struct {
	Namespace   string
	ID          string
	Values      []float32
	Sparse      *SparseValues
	SetMetadata map[string]any
	Filter      map[string]any
	DryRun      bool
}

func updateFromProto(b []byte) (updateRequest, error) {
	var req updateRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			req.ID, err = f.str()
		case 2:
			req.Values, err = f.appendFloats(req.Values)
		case 3:
			if err = f.want(protowire.BytesType); err == nil {
				req.SetMetadata, err = decodeStruct(f.bytes, 0)
			}
		case 4:
			req.Namespace, err = f.str()
		case 5:
			if err = f.want(protowire.BytesType); err == nil {
				req.Sparse, err = decodeSparse(f.bytes)
			}
		case 6:
			if err = f.want(protowire.BytesType); err == nil {
				req.Filter, err = decodeStruct(f.bytes, 0)
			}
		case 7:
			req.DryRun, err = f.boolean()
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func updateFromREST(_ *http.Request, body []byte) (updateRequest, error) {
	var in struct {
		ID           string         `json:"id"`
		Values       []float32      `json:"values"`
		SparseValues *SparseValues  `json:"sparseValues"`
		SetMetadata  map[string]any `json:"setMetadata"`
		Namespace    string         `json:"namespace"`
		Filter       map[string]any `json:"filter"`
		DryRun       bool           `json:"dryRun"`
	}
	err := decodeJSONBody(body, &in)
	return updateRequest{Namespace: in.Namespace, ID: in.ID, Values: in.Values, Sparse: in.SparseValues,
		SetMetadata: in.SetMetadata, Filter: in.Filter, DryRun: in.DryRun}, err
}

// updateResponse is UpdateResponse{matched_records=1} and {"matchedRecords": n}.
type updateResponse struct {
	lsnStamp
	MatchedRecords uint32
}

func (r updateResponse) proto() []byte { return appendVarint(nil, 1, uint64(r.MatchedRecords)) }
func (r updateResponse) json() any {
	return map[string]any{"matchedRecords": r.MatchedRecords}
}

// update changes one record by id (values, sparse values, metadata merged
// key by key), or the metadata of every record matching a filter. An id that
// does not exist matches nothing and is not an error.
func (s *Server) update(req updateRequest) (updateResponse, error) {
	if (req.ID == "") == (req.Filter == nil) {
		return updateResponse{}, errorf(InvalidArgument, "Update takes either an id or a filter, not both and not neither")
	}
	var match matcher
	if req.Filter != nil {
		if len(req.Values) > 0 || req.Sparse != nil {
			return updateResponse{}, errorf(InvalidArgument, "Update by filter can only set metadata, not values")
		}
		var err error
		if match, err = compileFilter(req.Filter); err != nil {
			return updateResponse{}, err
		}
	}
	if req.Sparse != nil && len(req.Sparse.Indices) != len(req.Sparse.Values) {
		return updateResponse{}, errorf(InvalidArgument, "Sparse values have %d indices and %d values; they must be the same length", len(req.Sparse.Indices), len(req.Sparse.Values))
	}
	if err := checkMetadata(req.ID, req.SetMetadata); err != nil {
		return updateResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.checkDimension(req.ID, req.Values); err != nil {
		return updateResponse{}, err
	}
	ns := canonicalNamespace(req.Namespace)
	var targets []*record
	if match == nil {
		if r := st.lookup(ns, req.ID); r != nil && r.deletedAt.IsZero() {
			targets = append(targets, r)
		}
	} else {
		for _, r := range st.live(ns) {
			if r.deletedAt.IsZero() && match(r.Metadata) {
				targets = append(targets, r)
			}
		}
	}
	resp := updateResponse{MatchedRecords: uint32(len(targets))}
	if req.DryRun {
		resp.lsnStamp = readStamp(st.maxIndexedLSN(ns))
		return resp, nil
	}
	updated := make([]Vector, 0, len(targets))
	for _, r := range targets {
		v := r.Vector
		if len(req.Values) > 0 {
			v.Values = req.Values
		}
		if req.Sparse != nil {
			v.Sparse = req.Sparse
		}
		if req.SetMetadata != nil {
			merged := maps.Clone(v.Metadata)
			if merged == nil {
				merged = map[string]any{}
			}
			maps.Copy(merged, req.SetMetadata)
			v.Metadata = merged
			if err := checkMetadata(v.ID, merged); err != nil {
				return updateResponse{}, err
			}
		}
		updated = append(updated, v)
	}
	for _, v := range updated {
		st.put(ns, v)
	}
	resp.lsnStamp = writeStamp(st.nextLSN(ns))
	return resp, nil
}
