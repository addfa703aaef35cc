package pcextract

import (
	"strings"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// restUpsert is what one pass over a REST upsert body found besides its
// vectors (readRESTUpsert's other result): the namespace, and whether there
// were vectors. Which fields hold subjects depends on the namespace, which
// may come after the vectors, so the subjects are read from the metadata
// afterwards; the vector values, nearly all of the body, are read only by
// the syntax check.
type restUpsert struct {
	ns         string // canonical
	hasVectors bool   // the "vectors" member is an array
}

// restUpsertVector holds the positions in the body of one vector's "id"
// and "metadata" values, -1 when absent. object is false when the element
// is not an object; then it has neither. dup names a member that appears
// more than once (see errRepeated).
type restUpsertVector struct {
	object   bool
	id, meta int
	dup      string
}

// readRESTUpsert checks the syntax of the whole body while it collects the
// positions UpsertREST needs, appending each vector's to dst[:0]. The error
// is a syntax error, else a "vectors" or "namespace" member that appears
// twice, else a "namespace" that is neither a string nor null.
// Other shape errors (a vector that is not an object, an id that is not a
// string) are UpsertREST's to report, since an upsert to a namespace
// without rules yields nothing whatever its shape.
func readRESTUpsert(body []byte, dst []restUpsertVector) (u restUpsert, vectors []restUpsertVector, err error) {
	c := strictjson.Walker{Doc: bytesView(body)}
	u.ns, vectors = extract.DefaultNamespace, dst[:0]
	root := c.Space(0)
	if c.Byte(root) != '{' {
		c.Document()
		if c.Err() != nil {
			return u, nil, errInvalidJSON("upsert", c.Err())
		}
		return u, nil, errNotJSONObject("upsert")
	}
	var nsErr, dupErr error
	seenVectors, seenNS := false, false
	i, more := c.OpenObject(root)
	for more {
		key, v := c.Member(i)
		c.Field = strictjson.Field{Index: -1}
		var end int
		switch {
		case strictjson.QuotedIs(key, "vectors"):
			if seenVectors && dupErr == nil {
				dupErr = errRepeated("upsert", "", "vectors")
			}
			seenVectors = true
			c.Field.Name = "vectors"
			vectors, u.hasVectors, end = readVectors(&c, v, vectors[:0])
		case strictjson.QuotedIs(key, "namespace"):
			if seenNS && dupErr == nil {
				dupErr = errRepeated("upsert", "", "namespace")
			}
			seenNS = true
			c.Field.Name = "namespace"
			end = c.Value(v)
			if c.Err() == nil && nsErr == nil {
				u.ns, nsErr = restNamespace(c.Doc, v, "upsert")
			}
		default:
			end = c.Value(v)
		}
		i, more = c.NextMember(end)
	}
	c.Field = strictjson.Field{}
	c.End(i)
	if c.Err() != nil {
		return u, nil, errInvalidJSON("upsert", c.Err())
	}
	if dupErr != nil {
		return u, nil, dupErr
	}
	return u, vectors, nsErr
}

// readVectors reads the "vectors" member's value at doc[v], appending its
// vectors to dst, and returns them, whether it is an array, and the index
// just past it.
func readVectors(c *strictjson.Walker, v int, dst []restUpsertVector) (vectors []restUpsertVector, array bool, end int) {
	if c.Byte(v) != '[' {
		return dst, false, c.Value(v)
	}
	i, more := c.OpenArray(v)
	for n := 0; more; n++ {
		c.Field = strictjson.Field{Name: "vectors", Index: n}
		vec := restUpsertVector{object: c.Byte(i) == '{', id: -1, meta: -1}
		var end int
		if vec.object {
			end = readRESTVector(c, i, &vec)
		} else {
			end = c.Value(i)
		}
		dst = append(dst, vec)
		i, more = c.NextElement(end)
	}
	return dst, true, i
}

// readRESTVector reads the vector object at doc[v] into vec and returns the
// index just past it. A "values" array of plain numbers is stepped over
// without its syntax checked (see flatNumbersEnd); everything else is.
func readRESTVector(c *strictjson.Walker, v int, vec *restUpsertVector) int {
	i, more := c.OpenObject(v)
	for more {
		key, fv := c.Member(i)
		c.Field.Member = ""
		switch {
		case strictjson.QuotedIs(key, "id"):
			if vec.id >= 0 && vec.dup == "" {
				vec.dup = "id"
			}
			c.Field.Member, vec.id = "id", fv
		case strictjson.QuotedIs(key, "metadata"):
			if vec.meta >= 0 && vec.dup == "" {
				vec.dup = "metadata"
			}
			c.Field.Member, vec.meta = "metadata", fv
		case strictjson.QuotedIs(key, "values"):
			c.Field.Member = "values"
			if end, ok := flatNumbersEnd(c.Doc, fv); ok {
				i, more = c.NextMember(end)
				continue
			}
		case strictjson.QuotedIs(key, "sparseValues"):
			c.Field.Member = "sparseValues"
		}
		i, more = c.NextMember(c.Value(fv))
	}
	return i
}

// flatNumbersEnd steps over the array at doc[v] when nothing in it can
// change the structure of the document around it: no string, object or
// nested array before its first ']'. It then returns the index just past
// that ']' without checking the numbers' syntax, at memory speed: a vector's
// values are nearly all of an upsert's bytes, and no tag comes from them.
// For every body Pinecone accepts (valid JSON) the array ends there and the
// walk around it is the one a full check makes; a body whose numbers are
// malformed is forwarded and Pinecone refuses it, which drops its intent.
// ok is false when the array holds anything else; the caller checks it in
// full.
func flatNumbersEnd(doc string, v int) (end int, ok bool) {
	if v >= len(doc) || doc[v] != '[' {
		return 0, false
	}
	n := strings.IndexByte(doc[v:], ']')
	if n < 0 {
		return 0, false
	}
	span := doc[v+1 : v+n]
	if strings.IndexByte(span, '"') >= 0 || strings.IndexByte(span, '[') >= 0 || strings.IndexByte(span, '{') >= 0 {
		return 0, false
	}
	return v + n + 1, true
}
