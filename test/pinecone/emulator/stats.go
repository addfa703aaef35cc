package emulator

import (
	"net/http"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// statsRequest is DescribeIndexStatsRequest{filter=1} and
// POST /describe_index_stats {"filter"} (GET without a body too).
type statsRequest struct {
	Filter map[string]any
}

func statsFromProto(b []byte) (statsRequest, error) {
	var req statsRequest
	fs, err := fields(b)
	if err != nil {
		return req, err
	}
	for _, f := range fs {
		if f.num == 1 {
			if err = f.want(protowire.BytesType); err == nil {
				req.Filter, err = decodeStruct(f.bytes, 0)
			}
			if err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

func statsFromREST(_ *http.Request, body []byte) (statsRequest, error) {
	var in statsRequest
	err := decodeJSONBody(body, &struct {
		Filter *map[string]any `json:"filter"`
	}{&in.Filter})
	return in, err
}

// namespaceCount is one namespace and how many visible records it holds.
type namespaceCount struct {
	Name  string
	Count uint32
}

// statsResponse is DescribeIndexStatsResponse{namespaces=1 map<string,
// NamespaceSummary{vector_count=1}>, dimension=2, index_fullness=3,
// total_vector_count=4, metric=5, vector_type=6} and its REST twin.
type statsResponse struct {
	lsnStamp
	Namespaces []namespaceCount
	Dimension  int
	Metric     string
}

func (r statsResponse) total() uint32 {
	var n uint32
	for _, ns := range r.Namespaces {
		n += ns.Count
	}
	return n
}

func (r statsResponse) proto() []byte {
	var b []byte
	for _, ns := range r.Namespaces {
		entry := appendString(nil, 1, ns.Name)
		entry = appendMessage(entry, 2, appendVarint(nil, 1, uint64(ns.Count)))
		b = appendMessage(b, 1, entry)
	}
	b = appendVarint(b, 2, uint64(r.Dimension))
	b = appendVarint(b, 4, uint64(r.total()))
	b = appendString(b, 5, r.Metric)
	return appendString(b, 6, "dense")
}

func (r statsResponse) json() any {
	namespaces := map[string]any{}
	for _, ns := range r.Namespaces {
		namespaces[ns.Name] = map[string]uint32{"vectorCount": ns.Count}
	}
	return map[string]any{"namespaces": namespaces, "dimension": r.Dimension, "indexFullness": 0,
		"totalVectorCount": r.total(), "metric": r.Metric, "vectorType": "dense"}
}

// describeIndexStats counts the visible records of each namespace that pass
// the filter; namespaces with none are left out.
func (s *Server) describeIndexStats(req statsRequest) (statsResponse, error) {
	pass, err := compileFilter(req.Filter)
	if err != nil {
		return statsResponse{}, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	resp := statsResponse{lsnStamp: readStamp(st.indexLSN()), Dimension: st.dimension, Metric: s.cfg.Metric}
	for _, name := range st.namespaceNames() {
		var n uint32
		for _, r := range st.live(name) {
			if pass(r.Metadata) {
				n++
			}
		}
		if n > 0 {
			resp.Namespaces = append(resp.Namespaces, namespaceCount{Name: name, Count: n})
		}
	}
	return resp, nil
}

// namespaceNames lists the namespaces holding any record, sorted. Callers hold mu.
func (st *store) namespaceNames() []string {
	names := make([]string, 0, len(st.namespaces))
	for name := range st.namespaces {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
