package strictjson

import "encoding/json"

// The functions below scan a JSON document already known to be valid
// (checked by Walk, or by the server that produced it): they find the end
// of a value without checking it again, and they allocate nothing unless a
// string holds escapes.

// Unquote decodes the quoted JSON string q.
func Unquote(q string) string {
	if !HasEscape(q) {
		return q[1 : len(q)-1]
	}
	var s string
	_ = json.Unmarshal([]byte(q), &s)
	return s
}

// QuotedIs reports whether the quoted JSON string q decodes to key.
func QuotedIs(q, key string) bool {
	if !HasEscape(q) {
		return len(q) == len(key)+2 && q[1:len(q)-1] == key
	}
	return Unquote(q) == key
}

// HasEscape reports whether the quoted JSON string q holds a backslash.
func HasEscape(q string) bool {
	for i := 1; i < len(q)-1; i++ {
		if q[i] == '\\' {
			return true
		}
	}
	return false
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(doc string, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the string starting at doc[i].
func SkipString(doc string, i int) int {
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

// SkipValue returns the index just past the value starting at doc[i].
func SkipValue(doc string, i int) int {
	switch doc[i] {
	case '"':
		return SkipString(doc, i)
	case '{', '[':
		depth := 0
		for ; i < len(doc); i++ {
			switch doc[i] {
			case '"':
				i = SkipString(doc, i) - 1
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
