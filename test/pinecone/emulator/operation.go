package emulator

import (
	"encoding/json"
	"net/http"
)

// response is what an operation returns: encodable for both protocols, and
// stamped with the LSN header Pinecone sends beside it.
type response interface {
	proto() []byte
	json() any
	stamp() lsnStamp
}

// lsnStamp is the x-pinecone-* LSN header of a response: writes carry the
// LSN they were given, reads the highest LSN they can see the effects of.
type lsnStamp struct {
	header string
	value  uint64
}

func (l lsnStamp) stamp() lsnStamp { return l }

const (
	headerRequestLSN    = "x-pinecone-request-lsn"
	headerMaxIndexedLSN = "x-pinecone-max-indexed-lsn"
)

func writeStamp(lsn uint64) lsnStamp { return lsnStamp{header: headerRequestLSN, value: lsn} }
func readStamp(lsn uint64) lsnStamp  { return lsnStamp{header: headerMaxIndexedLSN, value: lsn} }

// operation binds one API operation's decoders (gRPC message, REST request)
// to the function that runs it.
type operation struct {
	fromProto func(msg []byte) (any, error)
	fromREST  func(r *http.Request, body []byte) (any, error)
	run       func(s *Server, req any) (response, error)
}

// op builds an operation from typed functions; either decoder may be nil
// when the operation exists in only one protocol.
func op[Req any, Resp response](
	fromProto func([]byte) (Req, error),
	fromREST func(*http.Request, []byte) (Req, error),
	run func(*Server, Req) (Resp, error),
) operation {
	o := operation{run: func(s *Server, req any) (response, error) { return run(s, req.(Req)) }}
	if fromProto != nil {
		o.fromProto = func(b []byte) (any, error) { return fromProto(b) }
	}
	if fromREST != nil {
		o.fromREST = func(r *http.Request, b []byte) (any, error) { return fromREST(r, b) }
	}
	return o
}

// decodeJSONBody decodes a REST request body into v.
func decodeJSONBody(body []byte, v any) error {
	if len(body) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(InvalidArgument, "invalid JSON request body: %v", err)
	}
	return nil
}

// jsonVector is a Vector as the REST API spells it.
type jsonVector struct {
	ID           string         `json:"id"`
	Values       []float32      `json:"values"`
	SparseValues *SparseValues  `json:"sparseValues,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

func (v jsonVector) vector() Vector {
	return Vector{ID: v.ID, Values: v.Values, Sparse: v.SparseValues, Metadata: v.Metadata}
}

func toJSONVector(v Vector) jsonVector {
	values := v.Values
	if values == nil {
		values = []float32{}
	}
	return jsonVector{ID: v.ID, Values: values, SparseValues: v.Sparse, Metadata: v.Metadata}
}

// encodeVector encodes Vector{id=1, values=2, metadata=3, sparse_values=4}.
func encodeVector(v Vector) []byte {
	b := appendString(nil, 1, v.ID)
	b = appendPackedFloats(b, 2, v.Values)
	if v.Metadata != nil {
		b = appendMessage(b, 3, encodeStruct(v.Metadata))
	}
	if v.Sparse != nil {
		b = appendMessage(b, 4, encodeSparse(v.Sparse))
	}
	return b
}

// jsonUsage is the REST usage object.
type jsonUsage struct {
	ReadUnits uint32 `json:"readUnits"`
}

// Limits Pinecone documents for one record.
const (
	maxIDBytes       = 512
	maxMetadataBytes = 40 << 10
)

// checkVector refuses what Pinecone refuses in any written vector.
func checkVector(v Vector) error {
	if v.ID == "" {
		return errorf(InvalidArgument, "Vector ID must not be empty")
	}
	if len(v.ID) > maxIDBytes {
		return errorf(InvalidArgument, "Vector ID of %d bytes is longer than the limit of %d", len(v.ID), maxIDBytes)
	}
	if v.Sparse != nil && len(v.Sparse.Indices) != len(v.Sparse.Values) {
		return errorf(InvalidArgument, "Sparse vector %q has %d indices and %d values; they must be the same length", v.ID, len(v.Sparse.Indices), len(v.Sparse.Values))
	}
	return checkMetadata(v.ID, v.Metadata)
}

// checkMetadata refuses metadata Pinecone does not store: values other than
// strings, numbers, booleans and lists of strings (so no nulls and no nested
// objects), and more than 40 KB per record.
func checkMetadata(id string, md map[string]any) error {
	for k, v := range md {
		switch v := v.(type) {
		case string, float64, bool:
		case nil:
			return errorf(InvalidArgument, "Metadata value for field %q of vector %q is null, which is not supported: remove the field instead", k, id)
		case []any:
			for _, e := range v {
				if _, ok := e.(string); !ok {
					return errorf(InvalidArgument, "Metadata list in field %q of vector %q holds a value of type %s; lists may hold only strings", k, id, jsonKind(e))
				}
			}
		default:
			return errorf(InvalidArgument, "Metadata value for field %q of vector %q has type %s; use a string, number, boolean or list of strings", k, id, jsonKind(v))
		}
	}
	if md != nil {
		if b, _ := json.Marshal(md); len(b) > maxMetadataBytes {
			return errorf(InvalidArgument, "Metadata of vector %q is %d bytes, more than the limit of %d bytes per vector", id, len(b), maxMetadataBytes)
		}
	}
	return nil
}

// jsonKind names a JSON value's kind for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	}
	return "object"
}
