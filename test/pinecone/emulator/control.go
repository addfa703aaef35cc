package emulator

import (
	"net/http"
)

// The control plane is not emulated but for DescribeIndex of the one index
// and ListIndexes, which lists it: the Node SDK resolves an index's host
// through describe for upsertRecords even when it was given the host, and
// go-pinecone applications take the host from either, so a client pointed
// at the emulator as its control-plane host (controllerHostUrl,
// NewClientParams.Host) finds the data plane there too. The answers carry
// the members the SDKs parse (Node 5.x and 9.x's IndexModelFromJSON,
// go-pinecone v5's db_control.IndexModel); a 2026-07 describe has no
// "deployment" or "schema" here, which 9.x reads as absent.

// describeIndexRequest is GET /indexes/{name}; host is where it was asked,
// the default data-plane address.
type describeIndexRequest struct {
	Name string
	host string
}

func describeIndexFromREST(r *http.Request, _ []byte) (describeIndexRequest, error) {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return describeIndexRequest{Name: r.PathValue("name"), host: scheme + r.Host}, nil
}

// listIndexesRequest is GET /indexes; host is as in describeIndexRequest.
type listIndexesRequest struct{ host string }

func listIndexesFromREST(r *http.Request, body []byte) (listIndexesRequest, error) {
	d, _ := describeIndexFromREST(r, body)
	return listIndexesRequest{host: d.host}, nil
}

// indexList is the control plane's IndexList: {"indexes": [IndexModel]}.
type indexList struct {
	lsnStamp
	Indexes []indexDescription
}

func (l indexList) proto() []byte { return nil }

func (l indexList) json() any {
	out := make([]any, len(l.Indexes))
	for i, d := range l.Indexes {
		out[i] = d.json()
	}
	return map[string]any{"indexes": out}
}

func (s *Server) listIndexes(req listIndexesRequest) (indexList, error) {
	d, err := s.describeIndex(describeIndexRequest{Name: s.cfg.IndexName, host: req.host})
	if err != nil {
		return indexList{}, err
	}
	return indexList{lsnStamp: d.lsnStamp, Indexes: []indexDescription{d}}, nil
}

// indexDescription is the control plane's IndexModel, with the fields the
// SDKs read.
type indexDescription struct {
	lsnStamp
	Name      string
	Host      string
	Dimension int
	Metric    string
}

func (d indexDescription) proto() []byte { return nil }

func (d indexDescription) json() any {
	out := map[string]any{
		"name":                d.Name,
		"metric":              d.Metric,
		"host":                d.Host,
		"deletion_protection": "disabled",
		"vector_type":         "dense",
		// go-pinecone v5 (API 2025-10) fails to parse a serverless spec
		// without read_capacity, whose "mode" it switches on.
		"spec": map[string]any{"serverless": map[string]any{"cloud": "aws", "region": "us-east-1",
			"read_capacity": map[string]any{"mode": "OnDemand", "status": map[string]any{"state": "Ready"}}}},
		"status": map[string]any{"ready": true, "state": "Ready"},
	}
	if d.Dimension != 0 {
		out["dimension"] = d.Dimension
	}
	return out
}

func (s *Server) describeIndex(req describeIndexRequest) (indexDescription, error) {
	if req.Name != s.cfg.IndexName {
		return indexDescription{}, errorf(NotFound, "Resource %s not found: this emulator serves the index %q", req.Name, s.cfg.IndexName)
	}
	host := s.cfg.Host
	if host == "" {
		host = req.host
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	return indexDescription{lsnStamp: readStamp(st.indexLSN()), Name: s.cfg.IndexName, Host: host, Dimension: st.dimension, Metric: s.cfg.Metric}, nil
}

// controlPlaneError is the control plane's error body, which differs from
// the data plane's: {"error": {"code": "NOT_FOUND", "message"}, "status": 404}.
func controlPlaneError(e *Error) map[string]any {
	names := map[Code]string{InvalidArgument: "INVALID_ARGUMENT", NotFound: "NOT_FOUND", Unauthenticated: "UNAUTHENTICATED"}
	name, ok := names[e.Code]
	if !ok {
		name = "INTERNAL"
	}
	return map[string]any{"error": map[string]any{"code": name, "message": e.Message}, "status": e.httpStatus()}
}
