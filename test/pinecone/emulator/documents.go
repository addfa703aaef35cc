package emulator

import (
	"maps"
	"net/http"
	"strings"
)

// The API version 2026-07's document data plane (Pinecone's API reference,
// data-plane operations under /namespaces/{namespace}/documents/, and
// @pinecone-database/pinecone 9.0.0's generated DocumentOperationsApi):
// every operation is a POST with a JSON body; the namespace is the path's.
// A document is "_id" and its fields at the top level; the emulator keeps
// one as a record whose metadata is its fields, so documents share the
// vectors' namespaces, LSNs and late visibility of deletes.

// maxDocumentPage is the largest page of a documents fetch by filter.
const maxDocumentPage = 10000

// document is a Vector holding a document: ID is its "_id", Metadata its
// other fields (strings, numbers, booleans, lists of strings or of numbers,
// and sparse vectors as {"indices", "values"} objects).
func document(id string, fields map[string]any) Vector {
	return Vector{ID: id, Metadata: fields}
}

// documentJSON is a stored document as the API spells it: {"_id", …fields}
// with only the fields named in include when include is not nil.
func documentJSON(v Vector, include []string) map[string]any {
	out := make(map[string]any, len(v.Metadata)+1)
	if include == nil {
		maps.Copy(out, v.Metadata)
	}
	for _, f := range include {
		if x, ok := v.Metadata[f]; ok {
			out[f] = x
		}
	}
	out["_id"] = v.ID
	return out
}

// checkDocumentFields refuses what Pinecone refuses in a document's
// fields: names starting with "_" or "$" (reserved), nulls, nested
// objects other than a sparse vector, and mixed lists.
func checkDocumentFields(id string, fields map[string]any) error {
	for name, v := range fields {
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, "$") {
			return errorf(InvalidArgument, "Field name %q of document %q is reserved: names starting with '_' or '$' are not allowed", name, id)
		}
		if err := checkDocumentValue(id, name, v); err != nil {
			return err
		}
	}
	return nil
}

func checkDocumentValue(id, name string, v any) error {
	switch v := v.(type) {
	case string, float64, bool:
		return nil
	case []any:
		strs, nums := 0, 0
		for _, e := range v {
			switch e.(type) {
			case string:
				strs++
			case float64:
				nums++
			default:
				return errorf(InvalidArgument, "Field %q of document %q holds a list with a %s; lists hold only strings or only numbers", name, id, jsonKind(e))
			}
		}
		if strs > 0 && nums > 0 {
			return errorf(InvalidArgument, "Field %q of document %q mixes strings and numbers in one list", name, id)
		}
		return nil
	case map[string]any:
		if _, err := sparseField(v); err != nil {
			return errorf(InvalidArgument, "Field %q of document %q is an object but not a sparse vector: %v", name, id, err.Message)
		}
		return nil
	case nil:
		return errorf(InvalidArgument, "Field %q of document %q is null, which is not supported: remove the field instead", name, id)
	}
	return errorf(InvalidArgument, "Field %q of document %q has an unsupported type", name, id)
}

// sparseField reads a sparse vector field, {"indices": [...], "values": [...]}.
func sparseField(v map[string]any) (*SparseValues, *Error) {
	indices, okI := v["indices"].([]any)
	values, okV := v["values"].([]any)
	if !okI || !okV || len(v) != 2 || len(indices) != len(values) {
		return nil, errorf(InvalidArgument, "a sparse vector is {\"indices\": [...], \"values\": [...]} of equal length")
	}
	out := &SparseValues{}
	for i := range indices {
		idx, ok1 := indices[i].(float64)
		val, ok2 := values[i].(float64)
		if !ok1 || !ok2 || idx < 0 || idx != float64(uint32(idx)) {
			return nil, errorf(InvalidArgument, "sparse indices are unsigned integers and values numbers")
		}
		out.Indices = append(out.Indices, uint32(idx))
		out.Values = append(out.Values, float32(val))
	}
	return out, nil
}

// upsertDocumentsRequest is POST /namespaces/{namespace}/documents/upsert
// {"documents": [{"_id", …fields}]}.
type upsertDocumentsRequest struct {
	Namespace string
	Documents []map[string]any
}

func upsertDocumentsFromREST(r *http.Request, body []byte) (upsertDocumentsRequest, error) {
	var in struct {
		Documents []map[string]any `json:"documents"`
	}
	err := decodeJSONBody(body, &in)
	return upsertDocumentsRequest{Namespace: r.PathValue("namespace"), Documents: in.Documents}, err
}

// upsertDocumentsResponse is {"upserted_count": n}, sent with 202.
type upsertDocumentsResponse struct {
	lsnStamp
	UpsertedCount int
}

func (upsertDocumentsResponse) proto() []byte { return nil }
func (r upsertDocumentsResponse) json() any {
	return map[string]any{"upserted_count": r.UpsertedCount}
}

// upsertDocuments replaces every document whole or, if one is invalid, none.
func (s *Server) upsertDocuments(req upsertDocumentsRequest) (upsertDocumentsResponse, error) {
	if len(req.Documents) == 0 {
		return upsertDocumentsResponse{}, errorf(InvalidArgument, "No documents provided: send at least one document to upsert")
	}
	docs := make([]Vector, 0, len(req.Documents))
	for n, d := range req.Documents {
		id, ok := d["_id"].(string)
		if !ok || id == "" {
			return upsertDocumentsResponse{}, errorf(InvalidArgument, "documents[%d] has no non-empty string \"_id\"", n)
		}
		fields := maps.Clone(d)
		delete(fields, "_id")
		if len(id) > maxIDBytes {
			return upsertDocumentsResponse{}, errorf(InvalidArgument, "Document ID of %d bytes is longer than the limit of %d", len(id), maxIDBytes)
		}
		if len(fields) == 0 {
			return upsertDocumentsResponse{}, errorf(InvalidArgument, "Document %q has no fields besides \"_id\"", id)
		}
		if err := checkDocumentFields(id, fields); err != nil {
			return upsertDocumentsResponse{}, err
		}
		docs = append(docs, document(id, fields))
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	for _, d := range docs {
		st.put(ns, d)
	}
	return upsertDocumentsResponse{lsnStamp: writeStamp(st.nextLSN(ns)), UpsertedCount: len(docs)}, nil
}

// matchedResponse is {"matched_records": n}, the answer of a documents
// update or delete.
type matchedResponse struct {
	lsnStamp
	MatchedRecords int
}

func (matchedResponse) proto() []byte { return nil }
func (r matchedResponse) json() any {
	return map[string]any{"matched_records": r.MatchedRecords}
}

// updateDocumentsRequest is POST /namespaces/{namespace}/documents/update:
// either {"documents": [{"_id", …fields to set, "_remove_fields"?}]} (a
// patch per id) or {"filter", "set_fields"?, "remove_fields"?}.
type updateDocumentsRequest struct {
	Namespace    string
	Documents    []map[string]any
	hasDocuments bool
	Filter       map[string]any
	SetFields    map[string]any
	RemoveFields []string
}

func updateDocumentsFromREST(r *http.Request, body []byte) (updateDocumentsRequest, error) {
	var in struct {
		Documents    *[]map[string]any `json:"documents"`
		Filter       map[string]any    `json:"filter"`
		SetFields    map[string]any    `json:"set_fields"`
		RemoveFields []string          `json:"remove_fields"`
	}
	err := decodeJSONBody(body, &in)
	req := updateDocumentsRequest{Namespace: r.PathValue("namespace"), Filter: in.Filter, SetFields: in.SetFields, RemoveFields: in.RemoveFields}
	if in.Documents != nil {
		req.Documents, req.hasDocuments = *in.Documents, true
	}
	return req, err
}

// documentPatch is one change: fields to set and fields to remove.
type documentPatch struct {
	set    map[string]any
	remove []string
}

func (p documentPatch) apply(v Vector) Vector {
	fields := maps.Clone(v.Metadata)
	if fields == nil {
		fields = map[string]any{}
	}
	maps.Copy(fields, p.set)
	for _, f := range p.remove {
		delete(fields, f)
	}
	return document(v.ID, fields)
}

// updateDocuments patches documents by id (an id that does not exist is
// accepted and changes nothing) or every document a filter matches.
func (s *Server) updateDocuments(req updateDocumentsRequest) (matchedResponse, error) {
	byFilter := req.Filter != nil || len(req.SetFields) > 0 || len(req.RemoveFields) > 0
	switch {
	case req.hasDocuments && byFilter:
		return matchedResponse{}, errorf(InvalidArgument, "documents and filter (with set_fields, remove_fields) are mutually exclusive in an update")
	case req.hasDocuments && len(req.Documents) == 0:
		return matchedResponse{}, errorf(InvalidArgument, "documents must hold at least one document update")
	case !req.hasDocuments && req.Filter == nil:
		return matchedResponse{}, errorf(InvalidArgument, "An update takes either documents or a filter")
	case !req.hasDocuments && len(req.Filter) == 0:
		return matchedResponse{}, errorf(InvalidArgument, "An update's filter must not be empty")
	case !req.hasDocuments && len(req.SetFields) == 0 && len(req.RemoveFields) == 0:
		return matchedResponse{}, errorf(InvalidArgument, "An update by filter needs a non-empty set_fields or remove_fields")
	}
	patches := map[string]documentPatch{}
	var order []string
	for n, d := range req.Documents {
		id, ok := d["_id"].(string)
		if !ok || id == "" {
			return matchedResponse{}, errorf(InvalidArgument, "documents[%d] has no non-empty string \"_id\"", n)
		}
		if _, dup := patches[id]; dup {
			return matchedResponse{}, errorf(InvalidArgument, "document %q appears more than once in one update", id)
		}
		set := maps.Clone(d)
		delete(set, "_id")
		remove, err := removeFieldsOf(set)
		if err != nil {
			return matchedResponse{}, err
		}
		if err := checkDocumentFields(id, set); err != nil {
			return matchedResponse{}, err
		}
		patches[id], order = documentPatch{set: set, remove: remove}, append(order, id)
	}
	var match matcher
	if !req.hasDocuments {
		if err := checkDocumentFields("(by filter)", req.SetFields); err != nil {
			return matchedResponse{}, err
		}
		var err error
		if match, err = compileFilter(req.Filter); err != nil {
			return matchedResponse{}, err
		}
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	var updated []Vector
	if req.hasDocuments {
		for _, id := range order {
			if r := st.lookup(ns, id); r != nil && r.deletedAt.IsZero() {
				updated = append(updated, patches[id].apply(r.Vector))
			}
		}
	} else {
		patch := documentPatch{set: req.SetFields, remove: req.RemoveFields}
		for _, r := range st.live(ns) {
			if r.deletedAt.IsZero() && match(r.Metadata) {
				updated = append(updated, patch.apply(r.Vector))
			}
		}
	}
	for _, v := range updated {
		st.put(ns, v)
	}
	return matchedResponse{lsnStamp: writeStamp(st.nextLSN(ns)), MatchedRecords: len(updated)}, nil
}

// removeFieldsOf takes "_remove_fields" out of a per-id patch.
func removeFieldsOf(set map[string]any) ([]string, error) {
	raw, ok := set["_remove_fields"]
	if !ok {
		return nil, nil
	}
	delete(set, "_remove_fields")
	list, isList := raw.([]any)
	if !isList {
		return nil, errorf(InvalidArgument, "_remove_fields must be a list of field names")
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		name, isString := e.(string)
		if !isString {
			return nil, errorf(InvalidArgument, "_remove_fields must be a list of field names")
		}
		if _, alsoSet := set[name]; alsoSet {
			return nil, errorf(InvalidArgument, "field %q is both set and removed in one update", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// deleteDocumentsRequest is POST /namespaces/{namespace}/documents/delete
// with exactly one of {"ids"}, {"filter"} and {"delete_all": true}.
type deleteDocumentsRequest struct {
	Namespace string
	IDs       []string
	hasIDs    bool
	Filter    map[string]any
	DeleteAll bool
}

func deleteDocumentsFromREST(r *http.Request, body []byte) (deleteDocumentsRequest, error) {
	var in struct {
		IDs       *[]string      `json:"ids"`
		Filter    map[string]any `json:"filter"`
		DeleteAll bool           `json:"delete_all"`
	}
	err := decodeJSONBody(body, &in)
	req := deleteDocumentsRequest{Namespace: r.PathValue("namespace"), Filter: in.Filter, DeleteAll: in.DeleteAll}
	if in.IDs != nil {
		req.IDs, req.hasIDs = *in.IDs, true
	}
	return req, err
}

// deleteDocuments removes documents by ids, by filter or all of the
// namespace under one LSN; missing ids are not an error.
func (s *Server) deleteDocuments(req deleteDocumentsRequest) (matchedResponse, error) {
	given := 0
	for _, b := range []bool{req.hasIDs, req.Filter != nil, req.DeleteAll} {
		if b {
			given++
		}
	}
	if given != 1 {
		return matchedResponse{}, errorf(InvalidArgument, "Delete takes exactly one of ids, filter or delete_all; %d were given", given)
	}
	if req.hasIDs && len(req.IDs) == 0 {
		return matchedResponse{}, errorf(InvalidArgument, "ids must hold at least one document id")
	}
	var match matcher
	if req.Filter != nil {
		if len(req.Filter) == 0 {
			return matchedResponse{}, errorf(InvalidArgument, "Delete by filter needs a non-empty filter; use delete_all to empty a namespace")
		}
		var err error
		if match, err = compileFilter(req.Filter); err != nil {
			return matchedResponse{}, err
		}
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := canonicalNamespace(req.Namespace)
	var doomed []*record
	if req.hasIDs {
		for _, id := range req.IDs {
			if r := st.lookup(ns, id); r != nil && r.deletedAt.IsZero() && !containsRecord(doomed, r) {
				doomed = append(doomed, r)
			}
		}
	} else {
		for _, r := range st.live(ns) {
			if r.deletedAt.IsZero() && (match == nil || match(r.Metadata)) {
				doomed = append(doomed, r)
			}
		}
	}
	return matchedResponse{lsnStamp: writeStamp(st.remove(ns, doomed)), MatchedRecords: len(doomed)}, nil
}

func containsRecord(recs []*record, r *record) bool {
	for _, x := range recs {
		if x == r {
			return true
		}
	}
	return false
}
