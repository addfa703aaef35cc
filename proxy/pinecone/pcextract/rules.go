package pcextract

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/extract"
)

// AnyNamespace as a key of NewRules' map gives the subject fields of
// every namespace without a rule of its own.
const AnyNamespace = "*"

// Rules says which metadata fields of which namespaces of one
// Pinecone index hold data subjects. Its methods turn the body of one write
// request into tags; they are pure and safe for concurrent use.
//
// Tags name the record as Table "<index>/<namespace>" (the canonical
// namespace) and ID the record id. Subjects are the values of the subject
// fields in the record's metadata: a string as it is, a number as the one
// text of the float64 Pinecone keeps (NumberSubject: 4242.0 and
// 4.242e3 name "4242"; a number beyond float64 is an error), each string
// of a list; other values (booleans, null, objects) and absent fields give
// none, and the record is still tagged extract.OpWrite with no subjects, as a table
// row with no subject is. A namespace no rule covers yields no tags, as a
// table with no rule does. Ids, namespaces and subject strings must be
// valid UTF-8 (no invalid bytes, no lone surrogate escape); others are
// errors, since the store may keep another spelling of them.
//
// What each operation yields:
//
//   - upsert (REST and gRPC) and records upsert (NDJSON): one extract.OpWrite per
//     record.
//   - update by id whose setMetadata sets a subject field: one extract.OpWrite with
//     the subjects of the fields it sets (fields it leaves alone keep their
//     values, which earlier writes tagged); by id setting no subject field:
//     nothing, the record's subjects do not change; by filter setting a
//     subject field: one extract.OpUnattributed, since which records match is known
//     only to the store; by filter otherwise, or a dry run: nothing.
//   - delete by ids: one extract.OpDelete per id. Delete all (REST
//     "deleteAll": true, gRPC delete_all, documents "delete_all": true) and
//     DELETE /namespaces/{namespace} (DeleteNamespace) or gRPC
//     DeleteNamespace (DeleteNamespaceGRPC): one
//     extract.OpDeleteAll for the namespace. Delete by filter (vectors and
//     documents): one extract.OpDeleteByFilter for the namespace; which
//     records match is known only to the store, so the capture adapter
//     asks the store once the delete succeeded (it adds no personal data).
//   - documents (API version 2026-07): an upsert is one extract.OpWrite per
//     document, its subjects the subject fields at the document's top level;
//     an update by "_id" that sets or removes a subject field, one
//     extract.OpWrite (it moves the record); by filter, one
//     extract.OpUnattributed; a delete by ids, one extract.OpDelete per id
//     (see documents.go).
//   - bulk import: one extract.OpUnattributed (BulkImport); the records are in
//     files the proxy never sees.
//
// The request bodies are walked, not decoded: vector values (dense and
// sparse) are skipped without being read as numbers, so the cost of a
// request does not grow with its dimension beyond one pass over its bytes.
// JSON syntax is checked on the way, except inside a REST vector's "values"
// array of plain numbers, which is stepped over at memory speed: nothing
// there can change the structure around it, and Pinecone refuses a body
// whose numbers are malformed (see flatNumbersEnd).
// Errors name the field and the position of the bad part, never its value:
// ids and metadata are personal data and errors reach logs.
//
// Repeats are errors. In JSON, a member the extractor reads that appears
// twice in one object (vectors, namespace, id, metadata, setMetadata,
// dryRun, ids, a subject field; "_id" beside "id" in a record), since
// parsers differ on which one counts. In protobuf, a singular field that
// appears twice (id, metadata, namespace, a Struct entry's key or value, a
// subject field's map entry, a Value's kind), since a parser merges them.
// Either way tags read from one of them could miss the subject the store
// keeps; encoders write each once.
type Rules struct {
	index      string
	namespaces map[string][]string // canonical namespace → subject fields
	any        []string            // fields for namespaces without a rule; nil if none
}

// NewRules builds the rules of the index named index from a map of
// namespace to its metadata subject fields. The key AnyNamespace ("*")
// covers every namespace without its own key; "" and "__default__" are the
// same namespace and may not both appear.
func NewRules(index string, namespaces map[string][]string) (*Rules, error) {
	if index == "" {
		return nil, errors.New("pinecone: rules need the index name")
	}
	r := &Rules{index: index, namespaces: make(map[string][]string, len(namespaces))}
	for ns, fields := range namespaces {
		if len(fields) == 0 {
			return nil, fmt.Errorf("pinecone: index %q namespace %q has no subject fields; name at least one metadata field", index, ns)
		}
		for i, f := range fields {
			if f == "" {
				return nil, fmt.Errorf("pinecone: index %q namespace %q: subject field %d is empty; name a metadata field", index, ns, i+1)
			}
		}
		fields = slices.Clone(fields)
		if ns == AnyNamespace {
			r.any = fields
			continue
		}
		c := extract.CanonicalNamespace(ns)
		if _, dup := r.namespaces[c]; dup {
			return nil, fmt.Errorf("pinecone: index %q has rules for both \"\" and %q, which are the same namespace; keep one", index, extract.DefaultNamespace)
		}
		r.namespaces[c] = fields
	}
	return r, nil
}

// Index is the name of the index the rules are for.
func (r *Rules) Index() string { return r.index }

// Covers reports whether namespace has subject fields (its own or "*"'s).
func (r *Rules) Covers(namespace string) bool {
	_, ok := r.fields(extract.CanonicalNamespace(namespace))
	return ok
}

// SubjectFields returns the subject fields of namespace (its own or "*"'s);
// nil when no rule covers it.
func (r *Rules) SubjectFields(namespace string) []string {
	f, _ := r.fields(extract.CanonicalNamespace(namespace))
	return slices.Clone(f)
}

// BulkImport is the tag of POST /bulk/imports: one extract.OpUnattributed for the
// whole index (Table "<index>/*"), since the imported records, and the
// namespaces they go to, are in files the proxy never sees.
func (r *Rules) BulkImport() []extract.Tag {
	return []extract.Tag{{
		Table:  r.index + "/" + AnyNamespace,
		Op:     extract.OpUnattributed,
		Reason: "a bulk import writes records from files Lethe cannot read; upsert the records through the proxy instead",
	}}
}

// UnreadWrite is the tag of a request to the index that the proxy
// forwards unread (permissive mode): a path or API version extract does
// not read, described by what (its path's pattern and version, never a
// value). One extract.OpUnattributed for the whole index (Table "<index>/*"), as
// a bulk import, for reconcile to resolve.
func (r *Rules) UnreadWrite(what string) []extract.Tag {
	return []extract.Tag{{
		Table:  r.index + "/" + AnyNamespace,
		Op:     extract.OpUnattributed,
		Reason: what + " is a request Lethe does not read; send writes through the documented paths with a known API version",
	}}
}

// fields returns the subject fields of the canonical namespace ns.
func (r *Rules) fields(ns string) ([]string, bool) {
	if f, ok := r.namespaces[ns]; ok {
		return f, true
	}
	return r.any, r.any != nil
}

// DeleteNamespace is the tag of DELETE /namespaces/{namespace}, the
// namespace as the path names it: one extract.OpDeleteAll when a rule
// covers it, else nothing.
func (r *Rules) DeleteNamespace(namespace string) []extract.Tag {
	ns := extract.CanonicalNamespace(namespace)
	if _, covered := r.fields(ns); !covered || !utf8.ValidString(ns) {
		return nil // a namespace that is not UTF-8 text has no records in the ledger
	}
	return []extract.Tag{{Table: r.table(ns), Op: extract.OpDeleteAll}}
}

func (r *Rules) table(ns string) string {
	return r.index + "/" + ns
}
