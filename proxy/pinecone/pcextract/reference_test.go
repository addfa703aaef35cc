package pcextract

import (
	"encoding/json"
	"fmt"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// upsertRESTTwoPass is the reference for UpsertREST, written the simple
// way: json.Valid over the whole body, then a walk that trusts it. The
// one-pass UpsertREST must agree with it on every input
// (FuzzPineconeRESTAgreesWithEncodingJSON); BenchmarkPineconeUpsert runs
// both.
func (r *Rules) upsertRESTTwoPass(body []byte) ([]extract.Tag, error) {
	doc, root, ok := validJSONObject(body)
	if !ok {
		return nil, errNotJSONObject("upsert")
	}
	vectors := -1
	ns := extract.DefaultNamespace
	var nsErr error
	var seen members
	for m := membersOf(doc, root); ; {
		key, v, ok := m.next()
		if !ok {
			break
		}
		if name, twice := seen.once(key, "vectors", "namespace"); twice {
			return nil, errRepeated("upsert", "", name)
		}
		switch {
		case strictjson.QuotedIs(key, "vectors"):
			vectors = v
		case strictjson.QuotedIs(key, "namespace"):
			ns, nsErr = restNamespace(doc, v, "upsert")
		}
	}
	if nsErr != nil {
		return nil, nsErr
	}
	fields, covered := r.fields(ns)
	if !covered {
		return nil, nil
	}
	if vectors < 0 || doc[vectors] != '[' {
		return nil, fmt.Errorf("pinecone: upsert body has no \"vectors\" array")
	}
	table := r.table(ns)
	var tags []extract.Tag
	for e, n := elementsOf(doc, vectors), 0; ; n++ {
		vec, ok := e.next()
		if !ok {
			break
		}
		if doc[vec] != '{' {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d] is not an object", n)
		}
		id, meta := -1, -1
		var seen members
		for m := membersOf(doc, vec); ; {
			key, v, ok := m.next()
			if !ok {
				break
			}
			if name, twice := seen.once(key, "id", "metadata"); twice {
				return nil, errRepeated("upsert", fmt.Sprintf("vectors[%d].", n), name)
			}
			switch {
			case strictjson.QuotedIs(key, "id"):
				id = v
			case strictjson.QuotedIs(key, "metadata"):
				meta = v
			}
		}
		if id < 0 || doc[id] != '"' || doc[id+1] == '"' {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d] has no string \"id\" (or an empty one)", n)
		}
		idText, err := ownedJSONString(doc[id:strictjson.SkipString(doc, id)])
		if err != nil {
			return nil, fmt.Errorf("pinecone: upsert: vectors[%d].id %w", n, err)
		}
		t := extract.Tag{Table: table, Op: extract.OpWrite, ID: idText}
		if meta >= 0 && !isJSONNull(doc, meta) {
			if doc[meta] != '{' {
				return nil, fmt.Errorf("pinecone: upsert: vectors[%d].metadata is not an object", n)
			}
			if t.Subjects, err = jsonObjectSubjects(doc, meta, fields, nil); err != nil {
				return nil, err
			}
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// validJSONObject checks that body is one valid JSON object and returns
// its string view and the index of its '{'.
func validJSONObject(body []byte) (doc string, v int, ok bool) {
	if !json.Valid(body) {
		return "", 0, false
	}
	doc = bytesView(body)
	v = strictjson.SkipSpace(doc, 0)
	return doc, v, doc[v] == '{'
}
