package extract

import (
	"encoding/json"
	"errors"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

var errBadJSON = errors.New("extract: subject column holds invalid JSON")

// jsonSubjects follows path through the JSON text doc and appends the
// subjects found there: a string as it is, a number or boolean in its JSON
// text form, each such element of an array. A missing key, a null or an
// object yields nothing. With duplicate keys the last one counts, as in
// PostgreSQL's JSON functions. Invalid JSON is an error (PostgreSQL would
// reject the write too).
//
// It walks the text instead of decoding it: metadata documents can be large
// (whole chunks of text) while the subject is one short field, and this
// runs for every row written.
func jsonSubjects(doc string, path []string, dst []string) ([]string, error) {
	if !json.Valid([]byte(doc)) {
		return dst, errBadJSON
	}
	// From here on the text is known to be valid JSON.
	v := strictjson.SkipSpace(doc, 0)
	for _, key := range path {
		if doc[v] != '{' {
			return dst, nil // a scalar or array has no keys
		}
		found := -1
		i := strictjson.SkipSpace(doc, v+1)
		for doc[i] != '}' {
			kEnd := strictjson.SkipString(doc, i)
			k := doc[i:kEnd]
			i = strictjson.SkipSpace(doc, kEnd)
			i = strictjson.SkipSpace(doc, i+1) // ':'
			if strictjson.QuotedIs(k, key) {
				found = i
			}
			i = strictjson.SkipSpace(doc, strictjson.SkipValue(doc, i))
			if doc[i] == ',' {
				i = strictjson.SkipSpace(doc, i+1)
			}
		}
		if found < 0 {
			return dst, nil
		}
		v = found
	}
	if doc[v] != '[' {
		return appendJSONScalar(dst, doc, v), nil
	}
	i := strictjson.SkipSpace(doc, v+1)
	for doc[i] != ']' {
		dst = appendJSONScalar(dst, doc, i)
		i = strictjson.SkipSpace(doc, strictjson.SkipValue(doc, i))
		if doc[i] == ',' {
			i = strictjson.SkipSpace(doc, i+1)
		}
	}
	return dst, nil
}

// appendJSONScalar appends the value at doc[i] if it is a string, number or
// boolean.
func appendJSONScalar(dst []string, doc string, i int) []string {
	switch c := doc[i]; {
	case c == '"':
		return append(dst, strictjson.Unquote(doc[i:strictjson.SkipString(doc, i)]))
	case c == 't':
		return append(dst, "true")
	case c == 'f':
		return append(dst, "false")
	case c == '-' || c >= '0' && c <= '9':
		return append(dst, doc[i:strictjson.SkipValue(doc, i)])
	}
	return dst // null, object, array
}
