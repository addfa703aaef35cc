package pcextract

import (
	"fmt"
	"strings"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// The Pinecone REST data plane's write bodies (Pinecone's API reference,
// data plane, versions 2024-07 to 2025-10; docs/pinecone.md). Keys are matched exactly as Pinecone spells them; values and
// sparseValues are stepped over unread.

// UpsertREST tags the body of POST /vectors/upsert,
// {"vectors": [{"id", "values", "sparseValues", "metadata"}], "namespace"}:
// one extract.OpWrite per vector. The body is read once: its syntax is checked on
// the way (see readRESTUpsert), and then only the ids and metadata it found
// are read again.
func (r *Rules) UpsertREST(body []byte) ([]extract.Tag, error) {
	var buf [128]restUpsertVector // a typical batch's positions, without allocating
	u, vectors, err := readRESTUpsert(body, buf[:])
	if err != nil {
		return nil, err
	}
	fields, covered := r.fields(u.ns)
	if !covered {
		return nil, nil
	}
	if !u.hasVectors {
		return nil, fmt.Errorf("pinecone: upsert body has no \"vectors\" array")
	}
	doc := bytesView(body)
	table := r.table(u.ns)
	var tags []extract.Tag
	for n, vec := range vectors {
		if !vec.object {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d] is not an object", n)
		}
		if vec.dup != "" {
			return nil, errRepeated("upsert", fmt.Sprintf("vectors[%d].", n), vec.dup)
		}
		if vec.id < 0 || doc[vec.id] != '"' || doc[vec.id+1] == '"' {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d] has no string \"id\" (or an empty one)", n)
		}
		id, err := ownedJSONString(doc[vec.id:strictjson.SkipString(doc, vec.id)])
		if err != nil {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d].id %w", n, err)
		}
		t := extract.Tag{Table: table, Op: extract.OpWrite, ID: id}
		if vec.meta >= 0 && !isJSONNull(doc, vec.meta) {
			if doc[vec.meta] != '{' {
				return nil, fmt.Errorf("pinecone: upsert: vectors[%d].metadata is not an object", n)
			}
			if t.Subjects, err = jsonObjectSubjects(doc, vec.meta, fields, nil); err != nil {
				return nil, fmt.Errorf("pinecone: upsert: vectors[%d].metadata: %w", n, err)
			}
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// UpdateREST tags the body of POST /vectors/update, {"id", "values",
// "sparseValues", "setMetadata", "namespace", "filter", "dryRun"}: see
// Rules for what an update yields. "set_metadata", the proto
// field's own name, is read as "setMetadata": a REST front that decodes
// bodies with protojson (grpc-gateway, whose error shape Pinecone's is)
// accepts both names for one field, so an update written with it sets the
// metadata too. The two together are a repeat. "dry_run" is not read as
// "dryRun": an update it may leave undone is still tagged, which is safe.
func (r *Rules) UpdateREST(body []byte) ([]extract.Tag, error) {
	doc, root, err := checkedJSONObject(body, "update")
	if err != nil {
		return nil, err
	}
	id, set := -1, -1
	ns := extract.DefaultNamespace
	dryRun := false
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if strictjson.QuotedIs(key, "set_metadata") {
			key = `"setMetadata"` // the same field to a protojson parser
		}
		if name, twice := seen.once(key, "id", "setMetadata", "namespace", "dryRun"); twice {
			return nil, errRepeated("update", "", name)
		}
		switch {
		case strictjson.QuotedIs(key, "id"):
			if id, err = jsonMember(doc, v, id, "update", "id", '"', "a string"); err != nil {
				return nil, err
			}
		case strictjson.QuotedIs(key, "setMetadata"):
			if set, err = jsonMember(doc, v, set, "update", "setMetadata", '{', "an object"); err != nil {
				return nil, err
			}
		case strictjson.QuotedIs(key, "namespace"):
			if ns, err = restNamespace(doc, v, "update"); err != nil {
				return nil, err
			}
		case strictjson.QuotedIs(key, "dryRun"):
			if isJSONNull(doc, v) {
				continue
			}
			b, ok := jsonBool(doc, v)
			if !ok {
				return nil, fmt.Errorf("pinecone: update: \"dryRun\" is not a boolean")
			}
			dryRun = b
		}
	}
	fields, covered := r.fields(ns)
	if !covered || dryRun || set < 0 || !jsonObjectNames(doc, set, fields) {
		return nil, nil
	}
	if id < 0 || doc[id+1] == '"' { // no id, or "": an update by filter
		return []extract.Tag{r.unattributedUpdate(ns, fields)}, nil
	}
	subjects, err := jsonObjectSubjects(doc, set, fields, nil)
	if err != nil {
		return nil, fmt.Errorf("pinecone: update: setMetadata: %w", err)
	}
	idText, err := ownedJSONString(doc[id:strictjson.SkipString(doc, id)])
	if err != nil {
		return nil, fmt.Errorf("pinecone: update: \"id\" %w", err)
	}
	return []extract.Tag{{Table: r.table(ns), Op: extract.OpWrite, ID: idText, Subjects: subjects}}, nil
}

// DeleteREST tags the body of POST /vectors/delete, {"ids", "deleteAll",
// "namespace", "filter"}: one extract.OpDelete per id, one
// extract.OpDeleteAll for "deleteAll": true, one extract.OpDeleteByFilter
// for a "filter" object (see Rules).
func (r *Rules) DeleteREST(body []byte) ([]extract.Tag, error) {
	doc, root, err := checkedJSONObject(body, "delete")
	if err != nil {
		return nil, err
	}
	ids := -1
	ns := extract.DefaultNamespace
	all, filter := false, false
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "ids", "namespace", "deleteAll"); twice {
			return nil, errRepeated("delete", "", name)
		}
		switch {
		case strictjson.QuotedIs(key, "deleteAll"):
			all = isJSONTrue(doc, v)
		case strictjson.QuotedIs(key, "filter"):
			filter = doc[v] == '{'
		case strictjson.QuotedIs(key, "ids"):
			if ids, err = jsonMember(doc, v, ids, "delete", "ids", '[', "an array"); err != nil {
				return nil, err
			}
		case strictjson.QuotedIs(key, "namespace"):
			if ns, err = restNamespace(doc, v, "delete"); err != nil {
				return nil, err
			}
		}
	}
	if _, covered := r.fields(ns); !covered || ids < 0 && !all && !filter {
		return nil, nil
	}
	return deleteTags(doc, ids, all, filter, r.table(ns), "delete")
}

// deleteTags are the tags of a delete request already read: one
// extract.OpDeleteAll when all, one extract.OpDeleteByFilter when filter,
// one extract.OpDelete per id of the "ids" array at doc[ids] (ids < 0:
// none). op names the request in errors.
func deleteTags(doc string, ids int, all, filter bool, table, op string) ([]extract.Tag, error) {
	var tags []extract.Tag
	if all {
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteAll})
	}
	if filter {
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteByFilter})
	}
	for e, n := elementsOf(doc, ids), 0; ids >= 0; n++ {
		v, ok := e.next()
		if !ok {
			break
		}
		if doc[v] != '"' || doc[v+1] == '"' {
			return nil, fmt.Errorf("pinecone: %s: ids[%d] is not a non-empty string", op, n)
		}
		id, err := ownedJSONString(doc[v:strictjson.SkipString(doc, v)])
		if err != nil {
			return nil, fmt.Errorf("pinecone: %s: ids[%d] %w", op, n, err)
		}
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDelete, ID: id})
	}
	return tags, nil
}

// isJSONTrue reports whether the value at doc[v] is the literal true.
func isJSONTrue(doc string, v int) bool {
	return strings.HasPrefix(doc[v:], "true")
}

// restNamespace reads the "namespace" member at doc[v]: a string, or null
// for the default namespace.
func restNamespace(doc string, v int, op string) (string, error) {
	if isJSONNull(doc, v) {
		return extract.DefaultNamespace, nil
	}
	if doc[v] != '"' {
		return "", fmt.Errorf("pinecone: %s: \"namespace\" is not a string", op)
	}
	ns, err := ownedJSONString(doc[v:strictjson.SkipString(doc, v)])
	if err != nil {
		return "", fmt.Errorf("pinecone: %s: \"namespace\" %w", op, err)
	}
	return extract.CanonicalNamespace(ns), nil
}

// errRepeated refuses a member the extractor reads that appears twice in
// one object: JSON parsers differ on which one counts (the first, the
// last, or an error), so tags read from one of them could miss what the
// store keeps. Encoders write each member once.
func errRepeated(op, where, name string) error {
	return fmt.Errorf("pinecone: %s: %s%q appears more than once in one object", op, where, name)
}

// members tracks which of the names an object's members have used.
type members struct{ seen uint8 }

// once records key if it is one of names (at most 8) and reports whether
// it was seen before, and its name.
func (m *members) once(key string, names ...string) (string, bool) {
	for i, n := range names {
		if strictjson.QuotedIs(key, n) {
			bit := uint8(1) << i
			twice := m.seen&bit != 0
			m.seen |= bit
			return n, twice
		}
	}
	return "", false
}

func errNotJSONObject(op string) error {
	return fmt.Errorf("pinecone: %s body is not a valid JSON object", op)
}

// unattributedUpdate is the tag of an update by filter that sets a subject
// field: the records it changes are known only to the store.
func (r *Rules) unattributedUpdate(ns string, fields []string) extract.Tag {
	return extract.Tag{
		Table:  r.table(ns),
		Op:     extract.OpUnattributed,
		Reason: fmt.Sprintf("an update by metadata filter sets a subject field (one of %q), so which records it moves is known only to Pinecone; update by id instead", fields),
	}
}

// jsonMember returns the position of a member's value, which must open
// with open ('"', '{' or '[') or be null (then it returns was, the
// position seen before); the error names the member and what it must be,
// never its value.
func jsonMember(doc string, v, was int, op, name string, open byte, kind string) (int, error) {
	if isJSONNull(doc, v) {
		return was, nil
	}
	if doc[v] != open {
		return 0, fmt.Errorf("pinecone: %s: %q is not %s", op, name, kind)
	}
	return v, nil
}
