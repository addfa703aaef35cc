package certificate

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// Certificates are read with a strict JSON reader of their own. A
// certificate must spell every member exactly, which encoding/json cannot
// check: it matches names case-insensitively, reads null as zero and cannot
// tell a missing member from a zero one. Decoding generically first
// (map[string]any) and checking that cost as much as both Ed25519
// verifications of a certificate together, so instead scanJSON checks a
// document once and lists its values as tokens, and the decoders in
// schema.go walk the tokens straight into the typed structs.
//
// scanJSON accepts exactly the documents encoding/json accepts, and the
// reader's strings read as encoding/json reads them (FuzzScanJSON holds
// both to that). When scanJSON rejects a document, encoding/json reads it
// again, so that the reason given is encoding/json's.

// A jsonKind is the JSON type of a token.
type jsonKind uint8

const (
	jsonObject jsonKind = iota + 1
	jsonArray
	jsonString
	jsonNumber
	jsonBool
	jsonNull
)

// A jsonToken is one JSON value of a scanned document. A container is
// followed by its contents: an object by a name and a value token per
// member, an array by its elements.
type jsonToken struct {
	kind  jsonKind
	plain bool  // a string without escapes and valid UTF-8: its text is its value
	start int32 // offset of the value's text; for a string, after the quote
	end   int32 // offset after the text; for a string, of the closing quote
	next  int32 // index of the token after this value and its contents
}

// maxJSONDepth is encoding/json's limit on nesting, which scanJSON shares.
const maxJSONDepth = 10000

// scanJSON checks that text is one JSON value with nothing but space around
// it, and returns its tokens appended to toks; the value is toks[0]. Offsets
// are int32: certificates are at most MaxSize bytes.
func scanJSON(text string, toks []jsonToken) ([]jsonToken, bool) {
	var buf [16]int32
	open := buf[:0] // the containers not yet closed, innermost last
	i := 0
	for {
		// A value starts at i.
		i = skipSpace(text, i)
		if i == len(text) {
			return nil, false
		}
		t := jsonToken{start: int32(i), next: int32(len(toks)) + 1}
		ok := true
		switch c := text[i]; c {
		case '{', '[':
			if len(open) == maxJSONDepth {
				return nil, false
			}
			t.kind = jsonArray
			if c == '{' {
				t.kind = jsonObject
			}
			open = append(open, int32(len(toks)))
			toks = append(toks, t)
			i = skipSpace(text, i+1)
			if i < len(text) && text[i] == c+2 { // '{'+2 is '}' and '['+2 is ']'
				break // empty: closed below like any other
			}
			if c == '{' {
				if toks, i, ok = scanName(text, i, toks); !ok {
					return nil, false
				}
			}
			continue
		case '"':
			var end int
			end, t.plain, ok = scanString(text, i)
			t.kind, t.start, t.end = jsonString, int32(i+1), int32(end-1)
			i = end
		case 't':
			t.kind, ok, i = jsonBool, strings.HasPrefix(text[i:], "true"), i+4
		case 'f':
			t.kind, ok, i = jsonBool, strings.HasPrefix(text[i:], "false"), i+5
		case 'n':
			t.kind, ok, i = jsonNull, strings.HasPrefix(text[i:], "null"), i+4
		default:
			t.kind = jsonNumber
			i, ok = scanNumber(text, i)
		}
		if !ok {
			return nil, false
		}
		if t.kind != jsonObject && t.kind != jsonArray {
			if t.kind != jsonString {
				t.end = int32(i)
			}
			toks = append(toks, t)
		}
		// A value ended before i: close what it ends, then find the next one.
		for {
			i = skipSpace(text, i)
			if len(open) == 0 {
				return toks, i == len(text)
			}
			if i == len(text) {
				return nil, false
			}
			top := &toks[open[len(open)-1]]
			c := text[i]
			if c == ',' {
				if top.kind == jsonObject {
					if toks, i, ok = scanName(text, skipSpace(text, i+1), toks); !ok {
						return nil, false
					}
				} else {
					i++
				}
				break
			}
			if c == '}' && top.kind == jsonObject || c == ']' && top.kind == jsonArray {
				i++
				top.end, top.next = int32(i), int32(len(toks))
				open = open[:len(open)-1]
				continue
			}
			return nil, false
		}
	}
}

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t') {
		i++
	}
	return i
}

// scanName scans the member name at i and the colon after it.
func scanName(text string, i int, toks []jsonToken) ([]jsonToken, int, bool) {
	if i == len(text) || text[i] != '"' {
		return toks, i, false
	}
	end, plain, ok := scanString(text, i)
	if !ok {
		return toks, i, false
	}
	toks = append(toks, jsonToken{kind: jsonString, plain: plain, start: int32(i + 1), end: int32(end - 1), next: int32(len(toks)) + 1})
	i = skipSpace(text, end)
	if i == len(text) || text[i] != ':' {
		return toks, i, false
	}
	return toks, i + 1, true
}

// stringSpecial marks the bytes scanString stops at: the quote, the
// backslash, control characters (not allowed in strings) and non-ASCII.
var stringSpecial = func() (special [256]bool) {
	for c := range special {
		special[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return special
}()

// scanString scans the string whose opening quote is at i and returns the
// offset after its closing quote. Invalid UTF-8 is allowed, as
// encoding/json allows it (and reads it as U+FFFD).
func scanString(text string, i int) (end int, plain, ok bool) {
	start := i + 1
	plain, ascii := true, true
	for i = start; i < len(text); i++ {
		c := text[i]
		if !stringSpecial[c] {
			continue
		}
		switch {
		case c == '"':
			if plain && !ascii {
				plain = utf8.ValidString(text[start:i])
			}
			return i + 1, plain, true
		case c == '\\':
			plain = false
			if i++; i == len(text) {
				return 0, false, false
			}
			switch text[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(text)-i <= 4 || !isHex4(text[i+1:i+5]) {
					return 0, false, false
				}
				i += 4
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		default:
			ascii = false
		}
	}
	return 0, false, false
}

func isHex4(s string) bool {
	for i := range 4 {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// scanNumber scans the number at i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(text string, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(text) && '0' <= text[i] && text[i] <= '9' {
			i++
		}
		return i
	}
	if text[i] == '-' {
		i++
	}
	switch {
	case i < len(text) && text[i] == '0':
		i++
	case i < len(text) && '1' <= text[i] && text[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(text) && text[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// decodeObject decodes one JSON object generically with encoding/json. The
// reader uses it only to say why scanJSON rejected a document.
func decodeObject(text string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}
