package pcextract

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// Strings the ledger keys on (record ids, namespaces, subjects) must be
// valid UTF-8: a store and the ledger would otherwise keep two spellings
// of one string (encoding/json turns invalid bytes and a lone surrogate
// escape such as "\ud800" into U+FFFD, another parser keeps the bytes or
// refuses them), and a forgotten subject could be written again in the
// other spelling. Such strings are refused.

// errNotUTF8 says why a string is refused, without quoting it.
var errNotUTF8 = errors.New("is not valid UTF-8 (invalid bytes, or a \\u escape of a lone surrogate); send it as UTF-8")

// ownedJSONString decodes the quoted JSON string q into a string that
// shares no memory with the document, refusing one that is not valid
// UTF-8 as written.
func ownedJSONString(q string) (string, error) {
	if !validJSONStringText(q) {
		return "", errNotUTF8
	}
	if strictjson.HasEscape(q) {
		return strictjson.Unquote(q), nil // json.Unmarshal made a new string
	}
	return strings.Clone(q[1 : len(q)-1]), nil
}

// validJSONStringText reports whether the quoted JSON string q (checked
// syntax) is UTF-8 and its \u escapes pair every surrogate.
func validJSONStringText(q string) bool {
	if !utf8.ValidString(q) {
		return false
	}
	for i := 1; i < len(q)-1; i++ {
		if q[i] != '\\' {
			continue
		}
		i++
		if q[i] != 'u' {
			continue
		}
		r := hex4(q[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff: // a low surrogate with no high one before it
			return false
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 >= len(q) || q[i+1] != '\\' || q[i+2] != 'u' {
				return false
			}
			if low := hex4(q[i+3 : i+7]); low < 0xdc00 || low > 0xdfff {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads four hex digits (checked syntax).
func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s) {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// protoString is a protobuf string field's value, refused when it is not
// valid UTF-8 (proto3 requires it; parsers differ on what they do).
func protoString(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", errNotUTF8
	}
	return string(b), nil
}
