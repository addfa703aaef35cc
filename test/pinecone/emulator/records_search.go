package emulator

import (
	"cmp"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// searchRecordsRequest is POST /records/namespaces/{namespace}/search:
// {"query": {"top_k", "filter", and one of "inputs": {"text"}, "vector":
// {"values"}, "id"}, "fields"}, as the Node SDK 9.x's searchRecords and
// go-pinecone v5's SearchRecords send it.
type searchRecordsRequest struct {
	Namespace string
	TopK      int
	Filter    map[string]any
	Text      *string
	Vector    []float32
	ID        string
	Fields    []string
	refused   string // a part of the request the emulator does not emulate
}

func searchRecordsFromREST(r *http.Request, body []byte) (searchRecordsRequest, error) {
	var in struct {
		Query struct {
			TopK   int            `json:"top_k"`
			Filter map[string]any `json:"filter"`
			Inputs map[string]any `json:"inputs"`
			Vector *struct {
				Values []float32 `json:"values"`
			} `json:"vector"`
			ID         string `json:"id"`
			MatchTerms any    `json:"match_terms"`
		} `json:"query"`
		Fields []string `json:"fields"`
		Rerank any      `json:"rerank"`
	}
	if err := decodeJSONBody(body, &in); err != nil {
		return searchRecordsRequest{}, err
	}
	q := in.Query
	req := searchRecordsRequest{Namespace: r.PathValue("namespace"), TopK: q.TopK, Filter: q.Filter, ID: q.ID, Fields: in.Fields}
	if q.Inputs != nil {
		text, ok := q.Inputs["text"].(string)
		if !ok {
			return req, errorf(InvalidArgument, `query.inputs must hold "text", a string`)
		}
		req.Text = &text
	}
	if q.Vector != nil {
		req.Vector = q.Vector.Values
	}
	switch {
	case q.MatchTerms != nil:
		req.refused = "query.match_terms"
	case in.Rerank != nil:
		req.refused = "rerank"
	}
	return req, nil
}

// recordHit is one scored record of a records search.
type recordHit struct {
	Vector
	Score float64
}

// searchRecordsResponse is {"result": {"hits": [{"_id", "_score",
// "fields"}]}, "usage": {"read_units", "embed_total_tokens"}}.
type searchRecordsResponse struct {
	lsnStamp
	Hits        []recordHit
	fields      []string
	embedTokens int
}

func (searchRecordsResponse) proto() []byte { return nil }
func (r searchRecordsResponse) json() any {
	hits := make([]map[string]any, 0, len(r.Hits))
	for _, h := range r.Hits {
		fields := map[string]any{}
		for k, v := range h.Metadata {
			if r.fields == nil || slices.Contains(r.fields, k) {
				fields[k] = v
			}
		}
		hits = append(hits, map[string]any{"_id": h.ID, "_score": h.Score, "fields": fields})
	}
	usage := map[string]any{"read_units": readUnits(len(hits))}
	if r.embedTokens > 0 {
		usage["embed_total_tokens"] = r.embedTokens
	}
	return map[string]any{"result": map[string]any{"hits": hits}, "usage": usage}
}

// searchRecords scores the visible records of a namespace that pass the
// filter and returns the top_k best, highest first. The emulator has no
// embedding model, so it stands in for an index with integrated embedding:
// a text query (inputs.text) scores a record by how many of the query's
// words, case folded, its string fields hold (records without one are no
// match); a vector query scores the records with dense values by the
// index's metric (higher is better; euclidean as the negated squared
// distance); a query by id uses that record's dense values, or, for a
// record written through /records (text only), its string fields as the
// text. fields limits the returned fields (all when absent). Reranking
// and match_terms are not emulated.
func (s *Server) searchRecords(req searchRecordsRequest) (searchRecordsResponse, error) {
	if req.refused != "" {
		return searchRecordsResponse{}, errorf(Unimplemented, "%s is not emulated", req.refused)
	}
	if req.TopK < 1 || req.TopK > maxTopK {
		return searchRecordsResponse{}, errorf(InvalidArgument, "query.top_k must be between 1 and %d, got %d", maxTopK, req.TopK)
	}
	given := 0
	for _, set := range []bool{req.Text != nil, req.Vector != nil, req.ID != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return searchRecordsResponse{}, errorf(InvalidArgument, "query takes exactly one of inputs, vector and id")
	}
	pass, err := compileFilter(req.Filter)
	if err != nil {
		return searchRecordsResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := searchRecordsResponse{lsnStamp: readStamp(st.maxIndexedLSN(canonicalNamespace(req.Namespace))), fields: req.Fields}
	ns := canonicalNamespace(req.Namespace)
	dense, text := req.Vector, req.Text
	if req.ID != "" {
		r := st.lookup(ns, req.ID)
		if r == nil {
			return resp, nil
		}
		if dense = r.Values; len(dense) == 0 {
			joined := strings.Join(recordText(r.Metadata), " ")
			text = &joined
		}
	}
	var words []string
	if text != nil {
		words = strings.Fields(strings.ToLower(*text))
		resp.embedTokens = len(words)
	}
	for _, r := range st.live(ns) {
		if !pass(r.Metadata) {
			continue
		}
		var score float64
		if text != nil {
			strs := recordText(r.Metadata)
			if len(strs) == 0 {
				continue
			}
			score = float64(wordsHeld(words, strs))
		} else {
			if len(r.Values) != len(dense) {
				continue
			}
			score = float64(s.score(dense, nil, r))
			if s.cfg.Metric == MetricEuclidean {
				score = -score
			}
		}
		resp.Hits = append(resp.Hits, recordHit{Vector: r.Vector, Score: score})
	}
	slices.SortFunc(resp.Hits, func(a, b recordHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(resp.Hits) > req.TopK {
		resp.Hits = resp.Hits[:req.TopK]
	}
	return resp, nil
}

// recordText is a record's string fields, case folded, in field order.
func recordText(md map[string]any) []string {
	names := make([]string, 0, len(md))
	for k, v := range md {
		if _, ok := v.(string); ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = strings.ToLower(md[k].(string))
	}
	return out
}

// wordsHeld counts the words that one of texts holds.
func wordsHeld(words, texts []string) int {
	n := 0
	for _, w := range words {
		for _, t := range texts {
			if strings.Contains(t, w) {
				n++
				break
			}
		}
	}
	return n
}
