// Package strictjson walks JSON text (RFC 8259) and checks its syntax as it
// goes, accepting exactly the documents encoding/json accepts (json.Valid):
// its grammar, its nesting limit (MaxDepth), and its leniency about the
// bytes inside strings (invalid UTF-8 passes; control characters and
// escapes other than JSON's do not). FuzzWalker_AgreesWithEncodingJSON
// holds it to that.
//
// A caller reads a document once: it steps through the members and
// elements it wants with OpenObject, Member, NextMember, OpenArray and
// NextElement, and passes every other value to Value, which checks it
// without keeping anything. What a caller builds on top (tags, tokens,
// stricter rules such as a canonical subset) is its own.
//
// Errors are sticky: the first one is kept, and every step after it
// returns the end of the document and "no more", so loops end by
// themselves; the caller looks at Err once, after its walk.
package strictjson

import "strconv"

// MaxDepth is encoding/json's nesting limit: json.Valid rejects a document
// with more containers open at once, and so does a Walker.
const MaxDepth = 10000

// A Walker checks the document Doc as its caller steps through it. Offsets
// are byte indexes into Doc; past the end of a value the caller gets the
// index just after it.
type Walker struct {
	Doc string
	// Field names the part of the document being read, for errors; the
	// caller sets it as it walks. Only names from the schema the caller
	// reads belong here, never the document's own keys, which may be
	// personal data.
	Field Field
	err   *SyntaxError
	depth int // containers open around the current position
}

// Err returns the first syntax error met so far, or nil.
func (w *Walker) Err() error {
	if w.err == nil {
		return nil
	}
	return w.err
}

// fail records the first error and returns the end of the document.
func (w *Walker) fail(i int, what string) int {
	if w.err == nil {
		if i >= len(w.Doc) {
			i, what = len(w.Doc), "unexpected end of the body"
		}
		w.err = &SyntaxError{What: what, Pos: i, Where: w.Field.String()}
	}
	return len(w.Doc)
}

// Byte returns Doc[i], or 0 (which starts no JSON value) past the end.
func (w *Walker) Byte(i int) byte {
	if i < len(w.Doc) {
		return w.Doc[i]
	}
	return 0
}

// Space returns the index of the first byte from i on that is not JSON
// white space.
func (w *Walker) Space(i int) int {
	for i < len(w.Doc) {
		switch w.Doc[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Document checks that the whole of Doc is one JSON value and returns the
// index of its first byte.
func (w *Walker) Document() int {
	v := w.Space(0)
	w.End(w.Value(v))
	return v
}

// End checks that only white space follows the top-level value ending at i.
func (w *Walker) End(i int) {
	if i = w.Space(i); i < len(w.Doc) {
		w.fail(i, "data after the top-level value")
	}
}

// Value checks the value at Doc[i] and returns the index just past it.
func (w *Walker) Value(i int) int {
	switch b := w.Byte(i); {
	case b == '"':
		return w.quoted(i)
	case b == '-' || isDigit(b):
		return w.number(i)
	case b == '{':
		return w.object(i)
	case b == '[':
		return w.array(i)
	case b == 't':
		return w.literal(i, "true")
	case b == 'f':
		return w.literal(i, "false")
	case b == 'n':
		return w.literal(i, "null")
	}
	return w.fail(i, "expected a value")
}

func (w *Walker) object(i int) int {
	j, more := w.OpenObject(i)
	for more {
		_, v := w.Member(j)
		j, more = w.NextMember(w.Value(v))
	}
	return j
}

// array checks the array at Doc[i]; runs of numbers, such as vector
// values, go through numbers rather than Value.
func (w *Walker) array(i int) int {
	j, more := w.OpenArray(i)
	for more {
		if b := w.Byte(j); b == '-' || isDigit(b) {
			j, more = w.numbers(j)
			continue
		}
		j, more = w.NextElement(w.Value(j))
	}
	return j
}

// OpenObject enters the object whose '{' is at Doc[i]. more says whether
// it has members; j is the first member's name, or just past an empty
// object.
func (w *Walker) OpenObject(i int) (j int, more bool) {
	return w.open(i, '{', '}')
}

// OpenArray enters the array whose '[' is at Doc[i]. more says whether it
// has elements; j is the first element, or just past an empty array.
func (w *Walker) OpenArray(i int) (j int, more bool) {
	return w.open(i, '[', ']')
}

func (w *Walker) open(i int, open, close byte) (int, bool) {
	if w.Byte(i) != open {
		return w.fail(i, "expected "+string(open)), false
	}
	if w.depth++; w.depth > MaxDepth {
		return w.fail(i, "nesting deeper than "+strconv.Itoa(MaxDepth)), false
	}
	j := w.Space(i + 1)
	if w.Byte(j) == close {
		w.depth--
		return j + 1, false
	}
	return j, true
}

// Member reads the member name at Doc[j] and its ':'; name is the quoted
// name as written (escapes and all), v the index of the member's value.
func (w *Walker) Member(j int) (name string, v int) {
	if w.Byte(j) != '"' {
		return "", w.fail(j, "expected a member name")
	}
	k := w.quoted(j)
	if w.err != nil {
		return "", k
	}
	name = w.Doc[j:k]
	k = w.Space(k)
	if w.Byte(k) != ':' {
		return "", w.fail(k, "expected ':' after a member name")
	}
	return name, w.Space(k + 1)
}

// NextMember steps past the ',' or '}' after a member's value ending at
// end: more says whether another member follows, at j.
func (w *Walker) NextMember(end int) (j int, more bool) {
	return w.next(end, '}')
}

// NextElement steps past the ',' or ']' after an element ending at end:
// more says whether another element follows, at j.
func (w *Walker) NextElement(end int) (j int, more bool) {
	return w.next(end, ']')
}

func (w *Walker) next(end int, close byte) (int, bool) {
	j := w.Space(end)
	switch w.Byte(j) {
	case ',':
		return w.Space(j + 1), true
	case close:
		w.depth--
		return j + 1, false
	}
	return w.fail(j, "expected ',' or "+string(close)), false
}
