package pcextract

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// UpsertRecordsREST tags the body of POST /records/namespaces/{namespace}/upsert:
// NDJSON, one object per line with the record's id in "_id" or "id" and its
// other fields flat beside it (they become its metadata). namespace is the
// path's. Each line is one extract.OpWrite whose subjects come from the top-level
// fields. Blank lines are skipped.
func (r *Rules) UpsertRecordsREST(namespace string, body []byte) ([]extract.Tag, error) {
	if !utf8.ValidString(namespace) {
		return nil, fmt.Errorf("pinecone: records upsert: the path's namespace %w", errNotUTF8)
	}
	ns := extract.CanonicalNamespace(namespace)
	fields, covered := r.fields(ns)
	if !covered {
		return nil, nil
	}
	table := r.table(ns)
	var tags []extract.Tag
	for n := 1; len(body) > 0; n++ {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c := strictjson.Walker{Doc: bytesView(line)}
		v := c.Document()
		if c.Err() != nil {
			return nil, fmt.Errorf("pinecone: records upsert: line %d is not valid JSON: %w", n, c.Err())
		}
		doc := c.Doc
		if doc[v] != '{' {
			return nil, fmt.Errorf("pinecone: records upsert: line %d is not a JSON object", n)
		}
		id := -1
		var seen members
		for m := membersOf(doc, v); ; {
			key, fv, ok := m.next()
			if !ok {
				break
			}
			name, twice := seen.once(key, "_id", "id")
			switch {
			case twice:
				return nil, errRepeated("records upsert", fmt.Sprintf("line %d: ", n), name)
			case name == "":
			case id >= 0: // both "_id" and "id": which one is the id, and which metadata, is Pinecone's to say
				return nil, fmt.Errorf("pinecone: records upsert: line %d has both \"_id\" and \"id\"; give one", n)
			default:
				id = fv
			}
		}
		if id < 0 || doc[id] != '"' || doc[id+1] == '"' {
			return nil, fmt.Errorf("pinecone: records upsert: line %d has no non-empty string \"_id\" or \"id\"", n)
		}
		subjects, err := jsonObjectSubjects(doc, v, fields, nil)
		if err != nil {
			return nil, fmt.Errorf("pinecone: records upsert: line %d: %w", n, err)
		}
		idText, err := ownedJSONString(doc[id:strictjson.SkipString(doc, id)])
		if err != nil {
			return nil, fmt.Errorf("pinecone: records upsert: line %d: the id %w", n, err)
		}
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpWrite, ID: idText, Subjects: subjects})
	}
	return tags, nil
}
