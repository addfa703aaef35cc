package pcextract

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// The Pinecone REST bodies are checked by strictjson.Walker (jsoncheck.go)
// and then walked with the scanner of json.go (skipSpace, skipString,
// skipValue), which assumes valid JSON; an upsert's vectors are found
// during the check itself (pinecone_rest_upsert.go), and only their ids and
// metadata are walked again. Walking instead of decoding keeps the vector
// values as bytes that are stepped over: json.Unmarshal into []float32
// would parse, and allocate for, every number of every vector.

// bytesView returns b as a string without copying it. The view must not
// outlive the call that made it: callers hand us buffers they reuse, so
// every string kept in a tag is copied out (ownedJSONString, strings.Clone).
func bytesView(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// jsonMembers steps through the members of a JSON object in a document known
// to be valid.
type jsonMembers struct {
	doc string
	i   int
}

// membersOf starts at the object whose '{' is at doc[v].
func membersOf(doc string, v int) jsonMembers {
	return jsonMembers{doc: doc, i: v + 1}
}

// next returns the quoted key of the next member and the index of its value.
func (m *jsonMembers) next() (key string, v int, ok bool) {
	i := strictjson.SkipSpace(m.doc, m.i)
	if m.doc[i] == '}' {
		return "", 0, false
	}
	kEnd := strictjson.SkipString(m.doc, i)
	key = m.doc[i:kEnd]
	v = strictjson.SkipSpace(m.doc, strictjson.SkipSpace(m.doc, kEnd)+1) // past ':'
	i = strictjson.SkipSpace(m.doc, skipJSON(m.doc, v))
	if m.doc[i] == ',' {
		i++
	}
	m.i = i
	return key, v, true
}

// jsonElements steps through the elements of a JSON array in a document
// known to be valid.
type jsonElements struct {
	doc string
	i   int
}

// elementsOf starts at the array whose '[' is at doc[v].
func elementsOf(doc string, v int) jsonElements {
	return jsonElements{doc: doc, i: v + 1}
}

// next returns the index of the next element's value.
func (e *jsonElements) next() (v int, ok bool) {
	v = strictjson.SkipSpace(e.doc, e.i)
	if e.doc[v] == ']' {
		return 0, false
	}
	i := strictjson.SkipSpace(e.doc, skipJSON(e.doc, v))
	if e.doc[i] == ',' {
		i++
	}
	e.i = i
	return v, true
}

// isJSONNull reports whether the value at doc[v] is null.
func isJSONNull(doc string, v int) bool {
	return doc[v] == 'n'
}

// jsonBool reads the boolean at doc[v]; ok is false for other values.
func jsonBool(doc string, v int) (b, ok bool) {
	switch doc[v] {
	case 't':
		return true, true
	case 'f':
		return false, true
	}
	return false, false
}

// jsonObjectSubjects appends the subjects held in fields of the object at
// doc[v]: a string as it is (valid UTF-8 only), a number as
// NumberSubject writes it (one beyond float64 is an error), each
// string of an array.
// With duplicate keys the last one counts, as in PostgreSQL's JSON functions
// and Pinecone's.
func jsonObjectSubjects(doc string, v int, fields []string, dst []string) ([]string, error) {
	for _, f := range fields {
		found := -1
		for m := membersOf(doc, v); ; {
			key, fv, ok := m.next()
			if !ok {
				break
			}
			if strictjson.QuotedIs(key, f) {
				if found >= 0 {
					return nil, fmt.Errorf("subject field %q appears more than once in one object", f)
				}
				found = fv
			}
		}
		if found < 0 {
			continue
		}
		switch c := doc[found]; {
		case c == '"':
			s, err := ownedJSONString(doc[found:strictjson.SkipString(doc, found)])
			if err != nil {
				return nil, fmt.Errorf("subject field %q %w", f, err)
			}
			dst = append(dst, s)
		case c == '-' || c >= '0' && c <= '9':
			s, err := jsonNumberSubject(doc[found:strictjson.SkipValue(doc, found)])
			if err != nil {
				return nil, fmt.Errorf("subject field %q %w", f, err)
			}
			dst = append(dst, s)
		case c == '[':
			for e, n := elementsOf(doc, found), 0; ; n++ {
				ev, ok := e.next()
				if !ok {
					break
				}
				if doc[ev] == '"' {
					s, err := ownedJSONString(doc[ev:strictjson.SkipString(doc, ev)])
					if err != nil {
						return nil, fmt.Errorf("subject field %q element %d %w", f, n, err)
					}
					dst = append(dst, s)
				}
			}
		}
	}
	return dst, nil
}

// jsonObjectNames reports whether the object at doc[v] has a member named
// by one of fields.
func jsonObjectNames(doc string, v int, fields []string) bool {
	for m := membersOf(doc, v); ; {
		key, _, ok := m.next()
		if !ok {
			return false
		}
		for _, f := range fields {
			if strictjson.QuotedIs(key, f) {
				return true
			}
		}
	}
}

// skipJSON returns the index just past the value at doc[v] (valid JSON),
// as skipValue does, but steps over arrays holding no strings, arrays or
// objects — vector values, dense and sparse — with a byte search for their
// closing ']' instead of looking at each byte. A search that finds a string,
// array or object first is not tried again before the ']' it reached, so
// each byte is searched at most once.
func skipJSON(doc string, v int) int {
	if c := doc[v]; c != '[' && c != '{' {
		return strictjson.SkipValue(doc, v)
	}
	depth := 0
	noFlatBefore := 0
	for i := v; i < len(doc); i++ {
		switch doc[i] {
		case '"':
			i = strictjson.SkipString(doc, i) - 1
		case '[':
			if i >= noFlatBefore {
				end, flat := skipFlatArray(doc, i)
				if flat {
					if depth == 0 {
						return end
					}
					i = end - 1
					continue
				}
				noFlatBefore = end
			}
			depth++
		case '{':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(doc)
}

// skipFlatArray returns the index just past the array at doc[v] and true
// if the array holds only scalars other than strings; otherwise the index
// of the first ']' after v and false.
func skipFlatArray(doc string, v int) (int, bool) {
	e := strings.IndexByte(doc[v:], ']')
	if e < 0 {
		return len(doc), false
	}
	e += v
	seg := doc[v+1 : e]
	if strings.IndexByte(seg, '"') >= 0 || strings.IndexByte(seg, '[') >= 0 || strings.IndexByte(seg, '{') >= 0 {
		return e, false
	}
	return e + 1, true
}
