package certificate

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// Certificates are read with a strict JSON reader of their own. A
// certificate must spell every member exactly, which encoding/json cannot
// check: it matches names case-insensitively, reads null as zero and cannot
// tell a missing member from a zero one. Decoding generically first
// (map[string]any) and checking that cost as much as both Ed25519
// verifications of a certificate together, so instead scanJSON walks a
// document once with strictjson.Walker, which checks its syntax, and lists
// its values as tokens; the decoders in schema.go walk the tokens straight
// into the typed structs.
//
// scanJSON accepts exactly the documents encoding/json accepts (the
// Walker's contract), and the reader's strings read as encoding/json reads
// them (FuzzScanJSON holds both to that). When scanJSON rejects a
// document, encoding/json reads it again, so that the reason given is
// encoding/json's.

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

// scanJSON checks that text is one JSON value with nothing but space around
// it, and returns its tokens appended to toks; the value is toks[0]. Offsets
// are int32: certificates are at most MaxSize bytes.
func scanJSON(text string, toks []jsonToken) ([]jsonToken, bool) {
	w := strictjson.Walker{Doc: text}
	toks, end := appendValue(&w, w.Space(0), toks)
	w.End(end)
	if w.Err() != nil {
		return nil, false
	}
	return toks, true
}

// appendValue appends the tokens of the value at text[i], checking it with
// w, and returns them and the index just past the value. After a syntax
// error the tokens are meaningless; scanJSON drops them.
func appendValue(w *strictjson.Walker, i int, toks []jsonToken) ([]jsonToken, int) {
	var end int
	switch w.Byte(i) {
	case '{':
		at := len(toks)
		toks = append(toks, jsonToken{kind: jsonObject, start: int32(i)})
		j, more := w.OpenObject(i)
		for more {
			name, v := w.Member(j)
			toks = append(toks, stringToken(j, j+len(name), len(toks), w.Doc))
			toks, end = appendValue(w, v, toks)
			j, more = w.NextMember(end)
		}
		toks[at].end, toks[at].next = int32(j), int32(len(toks))
		return toks, j
	case '[':
		at := len(toks)
		toks = append(toks, jsonToken{kind: jsonArray, start: int32(i)})
		j, more := w.OpenArray(i)
		for more {
			toks, end = appendValue(w, j, toks)
			j, more = w.NextElement(end)
		}
		toks[at].end, toks[at].next = int32(j), int32(len(toks))
		return toks, j
	case '"':
		end = w.Value(i)
		return append(toks, stringToken(i, end, len(toks), w.Doc)), end
	}
	t := jsonToken{kind: jsonNumber, start: int32(i), next: int32(len(toks)) + 1}
	switch w.Byte(i) {
	case 't', 'f':
		t.kind = jsonBool
	case 'n':
		t.kind = jsonNull
	}
	end = w.Value(i)
	t.end = int32(end)
	return append(toks, t), end
}

// stringToken is the token at index n of the string text[i:end], quotes
// included.
func stringToken(i, end, n int, text string) jsonToken {
	t := jsonToken{kind: jsonString, start: int32(i + 1), end: int32(end - 1), next: int32(n) + 1}
	if end-i >= 2 {
		s := text[i+1 : end-1]
		t.plain = strings.IndexByte(s, '\\') < 0 && utf8.ValidString(s)
	}
	return t
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
