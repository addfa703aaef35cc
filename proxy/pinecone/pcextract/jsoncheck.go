package pcextract

import (
	"fmt"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// A strictjson.Walker reading a Pinecone body has its Field set to
// members of Pinecone's request schema only, never the client's keys,
// which may be personal data.

// checkedJSONObject checks that body is one JSON object and returns its
// string view and the index of its '{'. It reads the whole body; the
// extractors of small bodies then walk it with membersOf and elementsOf.
func checkedJSONObject(body []byte, op string) (doc string, v int, err error) {
	c := strictjson.Walker{Doc: bytesView(body)}
	v = c.Document()
	if err := c.Err(); err != nil {
		return "", 0, errInvalidJSON(op, err)
	}
	if c.Doc[v] != '{' {
		return "", 0, errNotJSONObject(op)
	}
	return c.Doc, v, nil
}

// errInvalidJSON wraps a strictjson.SyntaxError, which names the byte and
// the field and never quotes the body.
func errInvalidJSON(op string, err error) error {
	return fmt.Errorf("pinecone: %s body is not a valid JSON object: %w", op, err)
}
