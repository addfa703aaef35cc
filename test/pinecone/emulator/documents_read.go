package emulator

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strings"
)

// documentUsage is the documents API's usage object, {"read_units"}.
type documentUsage struct {
	ReadUnits uint32 `json:"read_units"`
}

// fetchDocumentsRequest is POST /namespaces/{namespace}/documents/fetch
// with exactly one of {"ids"} and {"filter"}, and "include_fields",
// "limit", "pagination_token" (a filter's pages).
type fetchDocumentsRequest struct {
	Namespace       string
	IDs             []string
	hasIDs          bool
	Filter          map[string]any
	IncludeFields   []string
	Limit           int
	PaginationToken string
}

func fetchDocumentsFromREST(r *http.Request, body []byte) (fetchDocumentsRequest, error) {
	var in struct {
		IDs             *[]string      `json:"ids"`
		Filter          map[string]any `json:"filter"`
		IncludeFields   []string       `json:"include_fields"`
		Limit           int            `json:"limit"`
		PaginationToken string         `json:"pagination_token"`
	}
	err := decodeJSONBody(body, &in)
	req := fetchDocumentsRequest{Namespace: r.PathValue("namespace"), Filter: in.Filter, IncludeFields: in.IncludeFields,
		Limit: in.Limit, PaginationToken: in.PaginationToken}
	if in.IDs != nil {
		req.IDs, req.hasIDs = *in.IDs, true
	}
	return req, err
}

// fetchDocumentsResponse is {"documents": {id: {"_id", …}}, "namespace",
// "usage", "pagination"?}.
type fetchDocumentsResponse struct {
	lsnStamp
	Namespace string
	Documents []Vector
	include   []string
	Next      string
}

func (fetchDocumentsResponse) proto() []byte { return nil }
func (r fetchDocumentsResponse) json() any {
	docs := make(map[string]any, len(r.Documents))
	for _, d := range r.Documents {
		docs[d.ID] = documentJSON(d, r.include)
	}
	out := map[string]any{"documents": docs, "namespace": r.Namespace, "usage": documentUsage{ReadUnits: readUnits(len(docs))}}
	if r.Next != "" {
		out["pagination"] = map[string]string{"next": r.Next}
	}
	return out
}

// fetchDocuments returns the visible documents among the ids (missing ids
// are left out), or one page, in id order, of those a filter matches. With
// no include_fields every field is returned.
func (s *Server) fetchDocuments(req fetchDocumentsRequest) (fetchDocumentsResponse, error) {
	if req.hasIDs == (req.Filter != nil) {
		return fetchDocumentsResponse{}, errorf(InvalidArgument, "Fetch takes exactly one of ids and filter")
	}
	if req.hasIDs && len(req.IDs) == 0 {
		return fetchDocumentsResponse{}, errorf(InvalidArgument, "ids must hold at least one document id")
	}
	if req.hasIDs && req.PaginationToken != "" {
		return fetchDocumentsResponse{}, errorf(InvalidArgument, "pagination_token is valid only with a filter")
	}
	limit, err := pageLimit(req.Limit, maxDocumentPage)
	if err != nil {
		return fetchDocumentsResponse{}, err
	}
	var match matcher
	if req.Filter != nil {
		if match, err = compileFilter(req.Filter); err != nil {
			return fetchDocumentsResponse{}, err
		}
	}
	after, err := decodePageToken(req.PaginationToken)
	if err != nil {
		return fetchDocumentsResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := fetchDocumentsResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), Namespace: req.Namespace, include: req.IncludeFields}
	ns := canonicalNamespace(req.Namespace)
	if req.hasIDs {
		for _, id := range req.IDs {
			if r := st.lookup(ns, id); r != nil {
				resp.Documents = append(resp.Documents, r.Vector)
			}
		}
		return resp, nil
	}
	for _, r := range st.live(ns) {
		if r.ID > after && match(r.Metadata) {
			resp.Documents = append(resp.Documents, r.Vector)
		}
	}
	slices.SortFunc(resp.Documents, func(a, b Vector) int { return cmp.Compare(a.ID, b.ID) })
	if len(resp.Documents) > limit {
		resp.Documents = resp.Documents[:limit]
		resp.Next = encodePageToken(resp.Documents[limit-1].ID)
	}
	return resp, nil
}

// pageLimit is a request's page size: 0 means the default, 100.
func pageLimit(limit, max int) (int, error) {
	switch {
	case limit == 0:
		return defaultListLimit, nil
	case limit < 0 || limit > max:
		return 0, errorf(InvalidArgument, "limit must be between 1 and %d, got %d", max, limit)
	}
	return limit, nil
}

// listDocumentsRequest is POST /namespaces/{namespace}/documents/list
// {"prefix"?, "limit"?, "pagination_token"?}.
type listDocumentsRequest struct {
	Namespace       string
	Prefix          string
	Limit           int
	PaginationToken string
}

func listDocumentsFromREST(r *http.Request, body []byte) (listDocumentsRequest, error) {
	var in struct {
		Prefix          string `json:"prefix"`
		Limit           int    `json:"limit"`
		PaginationToken string `json:"pagination_token"`
	}
	err := decodeJSONBody(body, &in)
	return listDocumentsRequest{Namespace: r.PathValue("namespace"), Prefix: in.Prefix, Limit: in.Limit, PaginationToken: in.PaginationToken}, err
}

// listDocumentsResponse is {"documents": [{"_id"}], "namespace", "usage",
// "pagination"?}.
type listDocumentsResponse struct {
	lsnStamp
	Namespace string
	IDs       []string
	Next      string
}

func (listDocumentsResponse) proto() []byte { return nil }
func (r listDocumentsResponse) json() any {
	items := make([]map[string]string, 0, len(r.IDs))
	for _, id := range r.IDs {
		items = append(items, map[string]string{"_id": id})
	}
	out := map[string]any{"documents": items, "namespace": r.Namespace, "usage": documentUsage{ReadUnits: 1}}
	if r.Next != "" {
		out["pagination"] = map[string]string{"next": r.Next}
	}
	return out
}

// listDocuments pages through the visible ids with the prefix in id order.
func (s *Server) listDocuments(req listDocumentsRequest) (listDocumentsResponse, error) {
	resp, err := s.list(listRequest{Namespace: req.Namespace, Prefix: req.Prefix, Limit: uint32(max(req.Limit, 0)), PaginationToken: req.PaginationToken})
	if err == nil && req.Limit < 0 {
		err = errorf(InvalidArgument, "limit must be a positive integer, got %d", req.Limit)
	}
	return listDocumentsResponse{lsnStamp: resp.lsnStamp, Namespace: req.Namespace, IDs: resp.IDs, Next: resp.Next}, err
}

// searchDocumentsRequest is POST /namespaces/{namespace}/documents/search
// {"score_by": [{"type", "field"|"fields", "values"|"sparse_values"|"query"}],
// "top_k", "include_fields"?, "filter"?}.
type searchDocumentsRequest struct {
	Namespace     string
	ScoreBy       []scoringMethod
	TopK          int
	IncludeFields []string
	Filter        map[string]any
}

// scoringMethod is one entry of score_by.
type scoringMethod struct {
	Type         string        `json:"type"`
	Fields       []string      `json:"fields"`
	Field        string        `json:"field"`
	Query        string        `json:"query"`
	Values       []float32     `json:"values"`
	SparseValues *SparseValues `json:"sparse_values"`
}

func searchDocumentsFromREST(r *http.Request, body []byte) (searchDocumentsRequest, error) {
	var in struct {
		ScoreBy       []scoringMethod `json:"score_by"`
		TopK          int             `json:"top_k"`
		IncludeFields []string        `json:"include_fields"`
		Filter        map[string]any  `json:"filter"`
	}
	err := decodeJSONBody(body, &in)
	return searchDocumentsRequest{Namespace: r.PathValue("namespace"), ScoreBy: in.ScoreBy, TopK: in.TopK,
		IncludeFields: in.IncludeFields, Filter: in.Filter}, err
}

// documentMatch is one scored document.
type documentMatch struct {
	Vector
	Score float64
}

// searchDocumentsResponse is {"matches": [{"_id", "_score", …included
// fields}], "namespace", "usage"}.
type searchDocumentsResponse struct {
	lsnStamp
	Namespace string
	Matches   []documentMatch
	include   []string
}

func (searchDocumentsResponse) proto() []byte { return nil }
func (r searchDocumentsResponse) json() any {
	matches := make([]map[string]any, 0, len(r.Matches))
	include := r.include
	if include == nil {
		include = []string{}
	}
	for _, m := range r.Matches {
		out := documentJSON(m.Vector, include)
		out["_score"] = m.Score
		matches = append(matches, out)
	}
	return map[string]any{"matches": matches, "namespace": r.Namespace, "usage": documentUsage{ReadUnits: readUnits(len(matches))}}
}

// searchDocuments scores the visible documents that pass the filter by the
// sum of score_by's methods and returns the top_k best. Emulated methods:
// dense_vector (one field, the index's metric; euclidean as its negated
// squared distance so that higher is better), sparse_vector (one field,
// dot product) and text (one or more string fields: the number of the
// query's words, case folded, that each field holds). query_string is
// not emulated. A document without a scored field is not a match.
func (s *Server) searchDocuments(req searchDocumentsRequest) (searchDocumentsResponse, error) {
	if len(req.ScoreBy) == 0 {
		return searchDocumentsResponse{}, errorf(InvalidArgument, "score_by must hold at least one scoring method")
	}
	if req.TopK < 1 || req.TopK > maxTopK {
		return searchDocumentsResponse{}, errorf(InvalidArgument, "top_k must be between 1 and %d, got %d", maxTopK, req.TopK)
	}
	for i, m := range req.ScoreBy {
		if err := s.checkScoring(i, m); err != nil {
			return searchDocumentsResponse{}, err
		}
	}
	pass, err := compileFilter(req.Filter)
	if err != nil {
		return searchDocumentsResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := searchDocumentsResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), Namespace: req.Namespace, include: req.IncludeFields}
	for _, r := range st.live(canonicalNamespace(req.Namespace)) {
		if !pass(r.Metadata) {
			continue
		}
		total, scored := 0.0, true
		for _, m := range req.ScoreBy {
			score, ok := s.scoreDocument(m, r.Metadata)
			total, scored = total+score, scored && ok
		}
		if scored {
			resp.Matches = append(resp.Matches, documentMatch{Vector: r.Vector, Score: total})
		}
	}
	slices.SortFunc(resp.Matches, func(a, b documentMatch) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(resp.Matches) > req.TopK {
		resp.Matches = resp.Matches[:req.TopK]
	}
	return resp, nil
}

// scoringFields is a method's fields: "fields", or "field" as a list of one.
func (m scoringMethod) scoringFields() []string {
	if m.Field != "" {
		return []string{m.Field}
	}
	return m.Fields
}

func (s *Server) checkScoring(i int, m scoringMethod) error {
	fields := m.scoringFields()
	if m.Field != "" && len(m.Fields) > 0 {
		return errorf(InvalidArgument, "score_by[%d] gives both field and fields; give one", i)
	}
	switch m.Type {
	case "dense_vector", "sparse_vector":
		if len(fields) != 1 {
			return errorf(InvalidArgument, "score_by[%d] (%s) scores exactly one field", i, m.Type)
		}
		if m.Type == "dense_vector" && len(m.Values) == 0 || m.Type == "sparse_vector" && m.SparseValues == nil {
			return errorf(InvalidArgument, "score_by[%d] (%s) needs its query vector", i, m.Type)
		}
	case "text":
		if len(fields) == 0 || strings.TrimSpace(m.Query) == "" {
			return errorf(InvalidArgument, "score_by[%d] (text) needs fields and a non-empty query", i)
		}
	case "query_string":
		return errorf(Unimplemented, "score_by[%d]: query_string scoring is not emulated", i)
	default:
		return errorf(InvalidArgument, "score_by[%d] has type %q; use dense_vector, sparse_vector, text or query_string", i, m.Type)
	}
	return nil
}

// scoreDocument scores one document's fields by m; ok is false when the
// document has no field m can score.
func (s *Server) scoreDocument(m scoringMethod, fields map[string]any) (score float64, ok bool) {
	switch m.Type {
	case "dense_vector":
		values, isList := numberList(fields[m.scoringFields()[0]])
		if !isList || len(values) != len(m.Values) {
			return 0, false
		}
		switch s.cfg.Metric {
		case MetricEuclidean:
			var sum float64
			for i := range values {
				d := float64(m.Values[i]) - float64(values[i])
				sum += d * d
			}
			return -sum, true
		case MetricDotProduct:
			return dot(m.Values, values), true
		}
		return float64(cosine(m.Values, values)), true
	case "sparse_vector":
		raw, isObject := fields[m.scoringFields()[0]].(map[string]any)
		if !isObject {
			return 0, false
		}
		sparse, err := sparseField(raw)
		if err != nil {
			return 0, false
		}
		return sparseDot(m.SparseValues, sparse), true
	}
	words := strings.Fields(strings.ToLower(m.Query))
	for _, f := range m.scoringFields() {
		text, isString := fields[f].(string)
		if !isString {
			continue
		}
		ok = true
		text = strings.ToLower(text)
		for _, w := range words {
			if strings.Contains(text, w) {
				score++
			}
		}
	}
	return score, ok
}

// numberList reads a list of numbers, a dense vector field.
func numberList(v any) ([]float32, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make([]float32, len(list))
	for i, e := range list {
		x, isNumber := e.(float64)
		if !isNumber {
			return nil, false
		}
		out[i] = float32(x)
	}
	return out, true
}

func cosine(a, b []float32) float32 {
	norms := dot(a, a) * dot(b, b)
	if norms == 0 {
		return 0
	}
	return float32(dot(a, b) / math.Sqrt(norms))
}
