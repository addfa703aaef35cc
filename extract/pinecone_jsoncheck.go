package extract

import (
	"fmt"
	"strconv"
)

// jsonCheck walks JSON text and checks its syntax as it goes, with the
// grammar and the nesting limit of encoding/json (json.Valid accepts exactly
// the documents it accepts), so that a body is read once: the extractors
// step through the members they want with openObject, member, nextMember,
// openArray and nextElement, and pass every other value to value, which
// checks it without keeping anything. Arrays of numbers (vector values)
// go through a loop that only checks number syntax.
//
// Errors are sticky: the first one is kept, and every step after it
// returns the end of the document and "no more", so loops end by
// themselves; the caller looks at err once, after its walk.
type jsonCheck struct {
	doc   string
	err   *jsonSyntaxError
	depth int       // containers open around the current position
	where jsonWhere // the field being read, for errors
}

// maxJSONDepth is encoding/json's nesting limit: json.Valid rejects a
// document with deeper nesting, and so does jsonCheck.
const maxJSONDepth = 10000

// jsonWhere names the field a position is in, for errors: name, then
// [index] if index ≥ 0, then .member if member is set. Only names from
// Pinecone's request schema go here: other keys are the client's and may
// be personal data.
type jsonWhere struct {
	name   string
	index  int
	member string
}

func (w jsonWhere) String() string {
	s := w.name
	if s == "" {
		return "the body"
	}
	if w.index >= 0 {
		s += "[" + strconv.Itoa(w.index) + "]"
	}
	if w.member != "" {
		s += "." + w.member
	}
	return s
}

// jsonSyntaxError says what is wrong, where (byte offset and field), and
// never quotes the text.
type jsonSyntaxError struct {
	what  string
	pos   int
	where string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("%s at byte %d (in %s)", e.what, e.pos, e.where)
}

// fail records the first error and returns the end of the document.
func (c *jsonCheck) fail(i int, what string) int {
	if c.err == nil {
		if i >= len(c.doc) {
			i, what = len(c.doc), "unexpected end of the body"
		}
		c.err = &jsonSyntaxError{what: what, pos: i, where: c.where.String()}
	}
	return len(c.doc)
}

// at returns doc[i], or 0 (which is never valid JSON) past the end.
func (c *jsonCheck) at(i int) byte {
	if i < len(c.doc) {
		return c.doc[i]
	}
	return 0
}

func (c *jsonCheck) space(i int) int {
	for i < len(c.doc) {
		switch c.doc[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// document checks that the whole text is one JSON value and returns the
// index of its first byte.
func (c *jsonCheck) document() int {
	v := c.space(0)
	c.end(c.value(v))
	return v
}

// end checks that only white space follows the top-level value ending at i.
func (c *jsonCheck) end(i int) {
	if i = c.space(i); i < len(c.doc) {
		c.fail(i, "data after the top-level value")
	}
}

// value checks the value at doc[i] and returns the index just past it.
func (c *jsonCheck) value(i int) int {
	switch b := c.at(i); {
	case b == '"':
		return c.str(i)
	case b == '-' || isDigit(b):
		return c.number(i)
	case b == '{':
		return c.object(i)
	case b == '[':
		return c.array(i)
	case b == 't':
		return c.literal(i, "true")
	case b == 'f':
		return c.literal(i, "false")
	case b == 'n':
		return c.literal(i, "null")
	}
	return c.fail(i, "expected a value")
}

func (c *jsonCheck) object(i int) int {
	j, more := c.openObject(i)
	for more {
		_, v := c.member(j)
		j, more = c.nextMember(c.value(v))
	}
	return j
}

// array checks the array at doc[i]; runs of numbers, vector values, go
// through numbers rather than value.
func (c *jsonCheck) array(i int) int {
	j, more := c.openArray(i)
	for more {
		if b := c.at(j); b == '-' || isDigit(b) {
			j, more = c.numbers(j)
			continue
		}
		j, more = c.nextElement(c.value(j))
	}
	return j
}

// numbers checks array elements from the number at doc[i] on, as long as
// they are numbers separated by a bare ','; it returns as nextElement does.
// It is number and nextElement in one loop: this is where nearly all the
// bytes of an upsert are.
func (c *jsonCheck) numbers(i int) (int, bool) {
	d := c.doc
	for {
		if i < len(d) && d[i] == '-' {
			i++
		}
		switch {
		case i < len(d) && d[i] == '0':
			i++
		case i < len(d) && d[i]-'1' < 9:
			for i++; i < len(d) && isDigit(d[i]); i++ {
			}
		default:
			return c.fail(i, "expected a digit in a number"), false
		}
		if i < len(d) && d[i] == '.' {
			i++
			frac := i
			for i < len(d) && isDigit(d[i]) {
				i++
			}
			if i == frac {
				return c.fail(i, "expected a digit after '.' in a number"), false
			}
		}
		if i < len(d) && d[i]|0x20 == 'e' {
			if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
				i++
			}
			exp := i
			for i < len(d) && isDigit(d[i]) {
				i++
			}
			if i == exp {
				return c.fail(i, "expected a digit in a number's exponent"), false
			}
		}
		if i < len(d) && d[i] == ',' {
			i++
			if i < len(d) && (d[i] == '-' || isDigit(d[i])) {
				continue
			}
			return c.space(i), true
		}
		return c.next(i, ']')
	}
}

// openObject enters the object whose '{' is at doc[i]. more says whether it
// has members; j is the first member's key, or just past an empty object.
func (c *jsonCheck) openObject(i int) (j int, more bool) {
	return c.open(i, '{', '}')
}

// openArray enters the array whose '[' is at doc[i]. more says whether it
// has elements; j is the first element, or just past an empty array.
func (c *jsonCheck) openArray(i int) (j int, more bool) {
	return c.open(i, '[', ']')
}

func (c *jsonCheck) open(i int, open, close byte) (int, bool) {
	if c.at(i) != open {
		return c.fail(i, "expected "+string(open)), false
	}
	if c.depth++; c.depth > maxJSONDepth {
		return c.fail(i, "nesting deeper than "+strconv.Itoa(maxJSONDepth)), false
	}
	j := c.space(i + 1)
	if c.at(j) == close {
		c.depth--
		return j + 1, false
	}
	return j, true
}

// member reads the key at doc[j] and its ':'; key is the quoted key as
// written, v the index of the member's value.
func (c *jsonCheck) member(j int) (key string, v int) {
	if c.at(j) != '"' {
		return "", c.fail(j, "expected a member name")
	}
	k := c.str(j)
	if c.err != nil {
		return "", k
	}
	key = c.doc[j:k]
	k = c.space(k)
	if c.at(k) != ':' {
		return "", c.fail(k, "expected ':' after a member name")
	}
	return key, c.space(k + 1)
}

// nextMember steps past the ',' or '}' after a member's value ending at
// end: more says whether another member follows, at j.
func (c *jsonCheck) nextMember(end int) (j int, more bool) {
	return c.next(end, '}')
}

// nextElement steps past the ',' or ']' after an element ending at end:
// more says whether another element follows, at j.
func (c *jsonCheck) nextElement(end int) (j int, more bool) {
	return c.next(end, ']')
}

func (c *jsonCheck) next(end int, close byte) (int, bool) {
	j := c.space(end)
	switch c.at(j) {
	case ',':
		return c.space(j + 1), true
	case close:
		c.depth--
		return j + 1, false
	}
	return c.fail(j, "expected ',' or "+string(close)), false
}

// str checks the string whose '"' is at doc[i] as encoding/json does: no
// control characters, only JSON's escapes; other bytes, valid UTF-8 or not,
// are accepted.
func (c *jsonCheck) str(i int) int {
	d := c.doc
	for i++; i < len(d); i++ {
		switch b := d[i]; {
		case b == '"':
			return i + 1
		case b < 0x20:
			return c.fail(i, "control character in a string")
		case b == '\\':
			i++
			switch c.at(i) {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if !isHexDigit(c.at(i + k)) {
						return c.fail(i+k, "bad \\u escape in a string")
					}
				}
				i += 4
			default:
				return c.fail(i, "bad escape in a string")
			}
		}
	}
	return c.fail(i, "unterminated string")
}

// number checks the number at doc[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *jsonCheck) number(i int) int {
	d := c.doc
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch b := c.at(i); {
	case b == '0':
		i++
	case b >= '1' && b <= '9':
		i = skipDigits(d, i+1)
	default:
		return c.fail(i, "expected a digit in a number")
	}
	if i < len(d) && d[i] == '.' {
		if i++; !isDigit(c.at(i)) {
			return c.fail(i, "expected a digit after '.' in a number")
		}
		i = skipDigits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !isDigit(c.at(i)) {
			return c.fail(i, "expected a digit in a number's exponent")
		}
		i = skipDigits(d, i+1)
	}
	return i
}

func (c *jsonCheck) literal(i int, lit string) int {
	if len(c.doc)-i < len(lit) || c.doc[i:i+len(lit)] != lit {
		return c.fail(i, "expected "+lit)
	}
	return i + len(lit)
}

func skipDigits(d string, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

func isDigit(b byte) bool { return b-'0' < 10 }

func isHexDigit(b byte) bool {
	return isDigit(b) || b|0x20 >= 'a' && b|0x20 <= 'f'
}

// checkedJSONObject checks that body is one JSON object and returns its
// string view and the index of its '{'. It reads the whole body; the
// extractors of small bodies then walk it with membersOf and elementsOf.
func checkedJSONObject(body []byte, op string) (doc string, v int, err error) {
	c := jsonCheck{doc: bytesView(body)}
	v = c.document()
	if c.err != nil {
		return "", 0, errInvalidJSON(op, c.err)
	}
	if c.doc[v] != '{' {
		return "", 0, errNotJSONObject(op)
	}
	return c.doc, v, nil
}

func errInvalidJSON(op string, err *jsonSyntaxError) error {
	return fmt.Errorf("extract: pinecone %s body is not a valid JSON object: %w", op, err)
}
