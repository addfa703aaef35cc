package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// upsertRecordsRequest is POST /records/namespaces/{namespace}/upsert: one
// JSON object per line, each with "_id" or "id"; the other fields become the
// record's metadata. The emulator has no embedding model, so records written
// this way have no dense values: fetch and list see them, vector queries skip them.
type upsertRecordsRequest struct {
	Namespace string
	Records   []Vector
}

func upsertRecordsFromREST(r *http.Request, body []byte) (upsertRecordsRequest, error) {
	recs, err := parseRecordsNDJSON(body)
	return upsertRecordsRequest{Namespace: r.PathValue("namespace"), Records: recs}, err
}

// parseRecordsNDJSON parses an NDJSON body of records. Blank lines are skipped.
func parseRecordsNDJSON(body []byte) ([]Vector, error) {
	var out []Vector
	for n, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(line, &fields); err != nil {
			return nil, errorf(InvalidArgument, "line %d of the NDJSON body is not a JSON object: %v", n+1, err)
		}
		if fields == nil {
			return nil, errorf(InvalidArgument, "line %d of the NDJSON body is null, want a JSON object", n+1)
		}
		id, err := recordID(fields)
		if err != nil {
			return nil, errorf(InvalidArgument, "line %d of the NDJSON body: %v", n+1, err.Message)
		}
		delete(fields, "_id")
		delete(fields, "id")
		v := Vector{ID: id, Metadata: fields}
		if err := checkVector(v); err != nil {
			return nil, errorf(InvalidArgument, "line %d of the NDJSON body: %v", n+1, err.(*Error).Message)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errorf(InvalidArgument, "the NDJSON body holds no records: send one JSON object per line")
	}
	return out, nil
}

// recordID takes a record's identifier from "_id", or else "id".
func recordID(fields map[string]any) (string, *Error) {
	for _, key := range []string{"_id", "id"} {
		v, ok := fields[key]
		if !ok {
			continue
		}
		id, isString := v.(string)
		if !isString || id == "" {
			return "", errorf(InvalidArgument, "field %q must be a non-empty string", key)
		}
		return id, nil
	}
	return "", errorf(InvalidArgument, `every record must have an "_id" or "id" field`)
}

// upsertRecordsResponse is the empty 201 reply.
type upsertRecordsResponse struct{ lsnStamp }

func (upsertRecordsResponse) proto() []byte { return nil }
func (upsertRecordsResponse) json() any     { return nil }

func (s *Server) upsertRecords(req upsertRecordsRequest) (upsertRecordsResponse, error) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	for _, v := range req.Records {
		st.put(ns, v)
	}
	return upsertRecordsResponse{writeStamp(st.nextLSN(ns))}, nil
}
