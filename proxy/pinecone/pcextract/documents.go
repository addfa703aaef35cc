package pcextract

import (
	"fmt"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// The API version 2026-07's document writes (Pinecone's API reference,
// data plane, /namespaces/{namespace}/documents/{upsert,update,delete};
// @pinecone-database/pinecone 9.0.0's DocumentOperationsApi; docs/pinecone.md).
// A document is "_id" and its fields at the top level: the rule's subject
// fields are read there, every other field (dense vectors as lists of
// numbers, sparse vectors as {"indices", "values"}, "_values") is stepped
// over unread. The namespace is the path's, not the body's.

// UpsertDocumentsREST tags the body of POST
// /namespaces/{namespace}/documents/upsert, {"documents": [{"_id", …fields}]}:
// one extract.OpWrite per document, its subjects the values of the
// subject fields at the document's top level.
func (r *Rules) UpsertDocumentsREST(namespace string, body []byte) ([]extract.Tag, error) {
	const op = "documents upsert"
	ns, doc, root, err := documentsBody(namespace, body, op)
	if err != nil {
		return nil, err
	}
	documents := -1
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "documents"); twice {
			return nil, errRepeated(op, "", name)
		}
		if strictjson.QuotedIs(key, "documents") {
			documents = v
		}
	}
	fields, covered := r.fields(ns)
	if !covered {
		return nil, nil
	}
	if documents < 0 || doc[documents] != '[' {
		return nil, fmt.Errorf("pinecone: %s body has no \"documents\" array", op)
	}
	table := r.table(ns)
	var tags []extract.Tag
	for e, n := elementsOf(doc, documents), 0; ; n++ {
		d, ok := e.next()
		if !ok {
			break
		}
		where := fmt.Sprintf("documents[%d]", n)
		id, err := documentID(doc, d, op, where)
		if err != nil {
			return nil, err
		}
		subjects, err := jsonObjectSubjects(doc, d, fields, nil)
		if err != nil {
			return nil, fmt.Errorf("pinecone: %s: %s: %w", op, where, err)
		}
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpWrite, ID: id, Subjects: subjects})
	}
	return tags, nil
}

// UpdateDocumentsREST tags the body of POST
// /namespaces/{namespace}/documents/update: either {"documents": [{"_id",
// …fields to set, "_remove_fields"?}]}, a patch per id, or {"filter",
// "set_fields"?, "remove_fields"?}. A per-id patch that sets or removes a
// subject field is one extract.OpWrite with the subjects it sets (it moves
// the record; fields it leaves alone keep their values, which earlier
// writes tagged); one that touches no subject field yields nothing. A
// patch by filter that sets or removes a subject field is one
// extract.OpUnattributed, since which documents match is known only to the
// store; otherwise nothing. Both forms in one body are an error, as they
// are to Pinecone.
func (r *Rules) UpdateDocumentsREST(namespace string, body []byte) ([]extract.Tag, error) {
	const op = "documents update"
	ns, doc, root, err := documentsBody(namespace, body, op)
	if err != nil {
		return nil, err
	}
	documents, filter, set, remove := -1, -1, -1, -1
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "documents", "filter", "set_fields", "remove_fields"); twice {
			return nil, errRepeated(op, "", name)
		}
		switch {
		case strictjson.QuotedIs(key, "documents"):
			documents, err = jsonMember(doc, v, documents, op, "documents", '[', "an array")
		case strictjson.QuotedIs(key, "filter"):
			filter, err = jsonMember(doc, v, filter, op, "filter", '{', "an object")
		case strictjson.QuotedIs(key, "set_fields"):
			set, err = jsonMember(doc, v, set, op, "set_fields", '{', "an object")
		case strictjson.QuotedIs(key, "remove_fields"):
			remove, err = jsonMember(doc, v, remove, op, "remove_fields", '[', "an array")
		}
		if err != nil {
			return nil, err
		}
	}
	if documents >= 0 && (filter >= 0 || set >= 0 && !emptyJSON(doc, set) || remove >= 0 && !emptyJSON(doc, remove)) {
		return nil, fmt.Errorf("pinecone: %s: \"documents\" and \"filter\" (with \"set_fields\", \"remove_fields\") are mutually exclusive; send one", op)
	}
	fields, covered := r.fields(ns)
	if !covered {
		return nil, nil
	}
	if documents < 0 {
		names, err := removedSubjectFields(doc, remove, fields, op, "remove_fields")
		if err != nil {
			return nil, err
		}
		if names || set >= 0 && jsonObjectNames(doc, set, fields) {
			return []extract.Tag{r.unattributedDocumentsUpdate(ns, fields)}, nil
		}
		return nil, nil
	}
	table := r.table(ns)
	var tags []extract.Tag
	for e, n := elementsOf(doc, documents), 0; ; n++ {
		d, ok := e.next()
		if !ok {
			break
		}
		where := fmt.Sprintf("documents[%d]", n)
		id, err := documentID(doc, d, op, where)
		if err != nil {
			return nil, err
		}
		removes := -1
		var seen members
		for m := membersOf(doc, d); ; {
			key, v, ok := m.next()
			if !ok {
				break
			}
			if name, twice := seen.once(key, "_remove_fields"); twice {
				return nil, errRepeated(op, where+".", name)
			}
			if strictjson.QuotedIs(key, "_remove_fields") {
				if removes, err = jsonMember(doc, v, removes, op, where+"._remove_fields", '[', "an array"); err != nil {
					return nil, err
				}
			}
		}
		removesSubject, err := removedSubjectFields(doc, removes, fields, op, where+"._remove_fields")
		if err != nil {
			return nil, err
		}
		if !removesSubject && !jsonObjectNames(doc, d, fields) {
			continue
		}
		subjects, err := jsonObjectSubjects(doc, d, fields, nil)
		if err != nil {
			return nil, fmt.Errorf("pinecone: %s: %s: %w", op, where, err)
		}
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpWrite, ID: id, Subjects: subjects})
	}
	return tags, nil
}

// DeleteDocumentsREST tags the body of POST
// /namespaces/{namespace}/documents/delete, exactly one of {"ids"},
// {"filter"} and {"delete_all": true}: one extract.OpDelete per id, one
// extract.OpDeleteAll for "delete_all": true, one
// extract.OpDeleteByFilter for a "filter" object, as the vectors' (see
// Rules).
func (r *Rules) DeleteDocumentsREST(namespace string, body []byte) ([]extract.Tag, error) {
	const op = "documents delete"
	ns, doc, root, err := documentsBody(namespace, body, op)
	if err != nil {
		return nil, err
	}
	ids := -1
	all, filter := false, false
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "ids", "filter", "delete_all"); twice {
			return nil, errRepeated(op, "", name)
		}
		if strictjson.QuotedIs(key, "delete_all") {
			all = isJSONTrue(doc, v)
		}
		if strictjson.QuotedIs(key, "filter") {
			filter = doc[v] == '{'
		}
		if strictjson.QuotedIs(key, "ids") {
			if ids, err = jsonMember(doc, v, ids, op, "ids", '[', "an array"); err != nil {
				return nil, err
			}
		}
	}
	if _, covered := r.fields(ns); !covered || ids < 0 && !all && !filter {
		return nil, nil
	}
	return deleteTags(doc, ids, all, filter, r.table(ns), op)
}

// documentsBody checks a documents write: the path's namespace (valid
// UTF-8; "" is the default namespace) and a body that is one JSON object.
func documentsBody(namespace string, body []byte, op string) (ns, doc string, root int, err error) {
	if !utf8.ValidString(namespace) {
		return "", "", 0, fmt.Errorf("pinecone: %s: the path's namespace %w", op, errNotUTF8)
	}
	doc, root, err = checkedJSONObject(body, op)
	return extract.CanonicalNamespace(namespace), doc, root, err
}

// documentID reads the "_id" of the document object at doc[d]: present
// once, a non-empty string.
func documentID(doc string, d int, op, where string) (string, error) {
	if doc[d] != '{' {
		return "", fmt.Errorf("pinecone: %s: %s is not an object", op, where)
	}
	id := -1
	var seen members
	for m := membersOf(doc, d); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "_id"); twice {
			return "", errRepeated(op, where+".", name)
		}
		if strictjson.QuotedIs(key, "_id") {
			id = v
		}
	}
	if id < 0 || doc[id] != '"' || doc[id+1] == '"' {
		return "", fmt.Errorf("pinecone: %s: %s has no non-empty string \"_id\"", op, where)
	}
	text, err := ownedJSONString(doc[id:strictjson.SkipString(doc, id)])
	if err != nil {
		return "", fmt.Errorf("pinecone: %s: %s._id %w", op, where, err)
	}
	return text, nil
}

// removedSubjectFields reports whether the array of field names at doc[v]
// (v < 0: absent) names a subject field. Its elements must be strings.
func removedSubjectFields(doc string, v int, fields []string, op, name string) (bool, error) {
	if v < 0 {
		return false, nil
	}
	found := false
	for e, n := elementsOf(doc, v), 0; ; n++ {
		ev, ok := e.next()
		if !ok {
			return found, nil
		}
		if doc[ev] != '"' {
			return false, fmt.Errorf("pinecone: %s: %s[%d] is not a string", op, name, n)
		}
		field, err := ownedJSONString(doc[ev:strictjson.SkipString(doc, ev)])
		if err != nil {
			return false, fmt.Errorf("pinecone: %s: %s[%d] %w", op, name, n, err)
		}
		for _, f := range fields {
			found = found || field == f
		}
	}
}

// emptyJSON reports whether the object or array at doc[v] has no members.
func emptyJSON(doc string, v int) bool {
	return doc[strictjson.SkipSpace(doc, v+1)] == '}' || doc[strictjson.SkipSpace(doc, v+1)] == ']'
}

// unattributedDocumentsUpdate is the tag of a documents update by filter
// that sets or removes a subject field.
func (r *Rules) unattributedDocumentsUpdate(ns string, fields []string) extract.Tag {
	return extract.Tag{
		Table:  r.table(ns),
		Op:     extract.OpUnattributed,
		Reason: fmt.Sprintf("a documents update by filter sets or removes a subject field (one of %q), so which documents it moves is known only to Pinecone; update by \"_id\" instead", fields),
	}
}
