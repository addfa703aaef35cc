package emulator

import (
	"cmp"
	"math"
	"net/http"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxTopK is Pinecone's upper bound on topK.
const maxTopK = 10000

// queryRequest is QueryRequest{namespace=1, top_k=2, filter=3,
// include_values=4, include_metadata=5, vector=7, id=8, sparse_vector=9}
// and POST /query with the same fields in camelCase. The deprecated batch
// field queries=6 is refused.
type queryRequest struct {
	Namespace       string
	TopK            uint32
	Filter          map[string]any
	IncludeValues   bool
	IncludeMetadata bool
	Vector          []float32
	Sparse          *SparseValues
	ID              string
	batch           bool
}

func queryFromProto(b []byte) (queryRequest, error) {
	var req queryRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			req.Namespace, err = f.str()
		case 2:
			req.TopK, err = f.uint32()
		case 3:
			if err = f.want(protowire.BytesType); err == nil {
				req.Filter, err = decodeStruct(f.bytes, 0)
			}
		case 4:
			req.IncludeValues, err = f.boolean()
		case 5:
			req.IncludeMetadata, err = f.boolean()
		case 6:
			req.batch = true
		case 7:
			req.Vector, err = f.appendFloats(req.Vector)
		case 8:
			req.ID, err = f.str()
		case 9:
			if err = f.want(protowire.BytesType); err == nil {
				req.Sparse, err = decodeSparse(f.bytes)
			}
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

func queryFromREST(_ *http.Request, body []byte) (queryRequest, error) {
	var in struct {
		Namespace       string         `json:"namespace"`
		TopK            uint32         `json:"topK"`
		Filter          map[string]any `json:"filter"`
		IncludeValues   bool           `json:"includeValues"`
		IncludeMetadata bool           `json:"includeMetadata"`
		Vector          []float32      `json:"vector"`
		SparseVector    *SparseValues  `json:"sparseVector"`
		ID              string         `json:"id"`
		Queries         []any          `json:"queries"`
	}
	err := decodeJSONBody(body, &in)
	return queryRequest{Namespace: in.Namespace, TopK: in.TopK, Filter: in.Filter, IncludeValues: in.IncludeValues,
		IncludeMetadata: in.IncludeMetadata, Vector: in.Vector, Sparse: in.SparseVector, ID: in.ID, batch: in.Queries != nil}, err
}

// match is one scored record of a query result.
type match struct {
	Vector
	Score float32
}

// queryResponse is QueryResponse{matches=2 (ScoredVector{id=1, score=2,
// values=3, metadata=4, sparse_values=5}), namespace=3, usage=4} and
// {"matches": [...], "namespace", "usage"}.
type queryResponse struct {
	lsnStamp
	Namespace string
	Matches   []match
}

func (r queryResponse) proto() []byte {
	var b []byte
	for _, m := range r.Matches {
		sv := appendString(nil, 1, m.ID)
		sv = appendFloat(sv, 2, m.Score)
		sv = appendPackedFloats(sv, 3, m.Values)
		if m.Metadata != nil {
			sv = appendMessage(sv, 4, encodeStruct(m.Metadata))
		}
		if m.Sparse != nil {
			sv = appendMessage(sv, 5, encodeSparse(m.Sparse))
		}
		b = appendMessage(b, 2, sv)
	}
	b = appendString(b, 3, r.Namespace)
	return appendMessage(b, 4, encodeUsage(readUnits(len(r.Matches))))
}

func (r queryResponse) json() any {
	type jsonMatch struct {
		jsonVector
		Score float32 `json:"score"`
	}
	matches := make([]jsonMatch, 0, len(r.Matches))
	for _, m := range r.Matches {
		matches = append(matches, jsonMatch{jsonVector: toJSONVector(m.Vector), Score: m.Score})
	}
	return map[string]any{"matches": matches, "namespace": r.Namespace, "usage": jsonUsage{ReadUnits: readUnits(len(r.Matches))}}
}

// readUnits is a plausible cost: one unit plus one per ten matches.
func readUnits(matches int) uint32 { return 1 + uint32(matches/10) }

// query scores the visible records that pass the filter against a vector
// (dense, sparse or both) or against the stored vector of an id, and returns
// the topK best: highest score for cosine and dotproduct, lowest squared
// distance for euclidean. Sparse values add to the score only for dotproduct
// indexes, as in Pinecone's hybrid search.
func (s *Server) query(req queryRequest) (queryResponse, error) {
	if req.batch {
		return queryResponse{}, errorf(InvalidArgument, "The queries field is no longer supported: send one query per request")
	}
	if req.TopK < 1 || req.TopK > maxTopK {
		return queryResponse{}, errorf(InvalidArgument, "topK must be between 1 and %d, got %d", maxTopK, req.TopK)
	}
	hasVector := len(req.Vector) > 0 || req.Sparse != nil
	if hasVector == (req.ID != "") {
		return queryResponse{}, errorf(InvalidArgument, "Query takes exactly one of vector (or sparseVector) and id")
	}
	if req.Sparse != nil && s.cfg.Metric != MetricDotProduct {
		return queryResponse{}, errorf(InvalidArgument, "Sparse vectors can be queried only on dotproduct indexes; this index uses %s", s.cfg.Metric)
	}
	pass, err := compileFilter(req.Filter)
	if err != nil {
		return queryResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := queryResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), Namespace: req.Namespace}
	ns := canonicalNamespace(req.Namespace)
	dense, sparse := req.Vector, req.Sparse
	if req.ID != "" {
		r := st.lookup(ns, req.ID)
		if r == nil {
			return resp, nil
		}
		dense, sparse = r.Values, nil
	}
	if len(dense) > 0 && st.dimension != 0 && len(dense) != st.dimension {
		return queryResponse{}, errorf(InvalidArgument, "Query vector dimension %d does not match the dimension of the index %d", len(dense), st.dimension)
	}
	for _, r := range st.live(ns) {
		if (len(dense) > 0 && len(r.Values) != len(dense)) || (len(dense) == 0 && r.Sparse == nil) || !pass(r.Metadata) {
			continue
		}
		m := match{Vector: Vector{ID: r.ID}, Score: s.score(dense, sparse, r)}
		if req.IncludeValues {
			m.Values, m.Sparse = r.Values, r.Sparse
		}
		if req.IncludeMetadata {
			m.Metadata = r.Metadata
		}
		resp.Matches = append(resp.Matches, m)
	}
	ascending := s.cfg.Metric == MetricEuclidean
	slices.SortFunc(resp.Matches, func(a, b match) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			if ascending {
				return c
			}
			return -c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(resp.Matches) > int(req.TopK) {
		resp.Matches = resp.Matches[:req.TopK]
	}
	return resp, nil
}

func (s *Server) score(dense []float32, sparse *SparseValues, r *record) float32 {
	switch s.cfg.Metric {
	case MetricEuclidean:
		var sum float64
		for i, x := range dense {
			d := float64(x) - float64(r.Values[i])
			sum += d * d
		}
		return float32(sum)
	case MetricDotProduct:
		return float32(dot(dense, r.Values) + sparseDot(sparse, r.Sparse))
	}
	norms := math.Sqrt(dot(dense, dense)) * math.Sqrt(dot(r.Values, r.Values))
	if norms == 0 {
		return 0
	}
	return float32(dot(dense, r.Values) / norms)
}

func dot(a, b []float32) float64 {
	var sum float64
	for i := range min(len(a), len(b)) {
		sum += float64(a[i]) * float64(b[i])
	}
	return sum
}

func sparseDot(a, b *SparseValues) float64 {
	if a == nil || b == nil {
		return 0
	}
	byIndex := make(map[uint32]float32, len(b.Indices))
	for i, idx := range b.Indices {
		byIndex[idx] = b.Values[i]
	}
	var sum float64
	for i, idx := range a.Indices {
		if i < len(a.Values) {
			sum += float64(a.Values[i]) * float64(byIndex[idx])
		}
	}
	return sum
}
