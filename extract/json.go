package extract

import (
	"encoding/json"
	"errors"
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
	v := skipSpace(doc, 0)
	for _, key := range path {
		if doc[v] != '{' {
			return dst, nil // a scalar or array has no keys
		}
		found := -1
		i := skipSpace(doc, v+1)
		for doc[i] != '}' {
			kEnd := skipString(doc, i)
			k := doc[i:kEnd]
			i = skipSpace(doc, kEnd)
			i = skipSpace(doc, i+1) // ':'
			if jsonStringIs(k, key) {
				found = i
			}
			i = skipSpace(doc, skipValue(doc, i))
			if doc[i] == ',' {
				i = skipSpace(doc, i+1)
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
	i := skipSpace(doc, v+1)
	for doc[i] != ']' {
		dst = appendJSONScalar(dst, doc, i)
		i = skipSpace(doc, skipValue(doc, i))
		if doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
	}
	return dst, nil
}

// appendJSONScalar appends the value at doc[i] if it is a string, number or
// boolean.
func appendJSONScalar(dst []string, doc string, i int) []string {
	switch c := doc[i]; {
	case c == '"':
		return append(dst, jsonString(doc[i:skipString(doc, i)]))
	case c == 't':
		return append(dst, "true")
	case c == 'f':
		return append(dst, "false")
	case c == '-' || c >= '0' && c <= '9':
		return append(dst, doc[i:skipValue(doc, i)])
	}
	return dst // null, object, array
}

// jsonString decodes a quoted JSON string (known valid).
func jsonString(q string) string {
	if !hasEscape(q) {
		return q[1 : len(q)-1]
	}
	var s string
	_ = json.Unmarshal([]byte(q), &s)
	return s
}

// jsonStringIs reports whether the quoted JSON string q decodes to key.
func jsonStringIs(q, key string) bool {
	if !hasEscape(q) {
		return len(q) == len(key)+2 && q[1:len(q)-1] == key
	}
	return jsonString(q) == key
}

func hasEscape(q string) bool {
	for i := 1; i < len(q)-1; i++ {
		if q[i] == '\\' {
			return true
		}
	}
	return false
}

func skipSpace(doc string, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at doc[i].
func skipString(doc string, i int) int {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value starting at doc[i].
func skipValue(doc string, i int) int {
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for ; i < len(doc); i++ {
			switch doc[i] {
			case '"':
				i = skipString(doc, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(doc) {
		switch doc[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
