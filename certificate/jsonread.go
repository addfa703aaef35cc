package certificate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A jsonReader decodes a scanned JSON object into Go values, member by
// member, and keeps the first problem of each kind it meets. The decoders in
// schema.go call it in the order of the struct fields, depth first, and
// look at an object's unknown members after its declared ones; that order
// defines "first". A member problem (unknown or missing member) outranks a
// type problem (a member of the wrong JSON type), which outranks a value
// problem (an integer or time its Go type cannot hold), wherever each
// occurs in the document.
type jsonReader struct {
	text string
	toks []jsonToken
	// The first problem of each kind, as the reason to report; "" if none.
	member, typ, value string
}

// newJSONReader scans text, which must be one JSON object holding about
// tokens values, in the subset checkJSONSubset allows. If it is not an
// object, the error is encoding/json's account of why.
func newJSONReader(text string, tokens int) (jsonReader, error) {
	toks, ok := scanJSON(text, make([]jsonToken, 0, tokens))
	if !ok || toks[0].kind != jsonObject {
		if _, err := decodeObject(text); err != nil {
			return jsonReader{}, err
		}
		// Unreachable while scanJSON and encoding/json agree.
		return jsonReader{}, errors.New("not a JSON object")
	}
	r := jsonReader{text: text, toks: toks}
	if err := checkJSONSubset(&r); err != nil {
		return jsonReader{}, err
	}
	return r, nil
}

// verdict returns the verdict and reason of the first problem: a member
// problem is schema_mismatch, the others malformed. It is "" if there is none.
func (r *jsonReader) verdict() (Verdict, string) {
	switch {
	case r.member != "":
		return VerdictSchemaMismatch, r.member
	case r.typ != "":
		return VerdictMalformed, r.typ
	case r.value != "":
		return VerdictMalformed, r.value
	}
	return "", ""
}

// maxMembers is the most members an object of a certificate has (Payload).
const maxMembers = 12

// jsonFields are the members of one object that a struct declares.
type jsonFields struct {
	obj   int32
	names []string          // the members the struct declares, in field order
	vals  [maxMembers]int32 // the token of names[k]'s value; 0 if absent
	// The least member name the struct does not declare, if any.
	unknown    string
	hasUnknown bool
}

// fields finds the declared members of object obj; checkJSONSubset has
// refused objects that repeat a member. Names match exactly.
func (r *jsonReader) fields(obj int32, names []string) jsonFields {
	f := jsonFields{obj: obj, names: names}
	for n := obj + 1; n < r.toks[obj].next; n = r.toks[n+1].next {
		name := r.stringAt(n)
		if k := slices.Index(names, name); k >= 0 {
			f.vals[k] = n + 1
		} else if !f.hasUnknown || name < f.unknown {
			f.unknown, f.hasUnknown = name, true
		}
	}
	return f
}

// object is fields for a value that must be an object; ok is false, with
// a type problem recorded, if t is not one (or is absent: t == 0).
func (r *jsonReader) object(t int32, names []string) (f jsonFields, ok bool) {
	if !r.is(t, jsonObject, "an object") {
		return f, false
	}
	return r.fields(t, names), true
}

// get returns the token of f's k-th declared member, or 0 (a member
// problem) if the object has no such member.
func (r *jsonReader) get(f *jsonFields, k int) int32 {
	if f.vals[k] == 0 && r.member == "" {
		r.member = fmt.Sprintf("member %q is missing", r.join(f.obj, f.names[k]))
	}
	return f.vals[k]
}

// done reports f's unknown member, once its declared members are read, so
// that a problem inside one of them comes first.
func (r *jsonReader) done(f *jsonFields) {
	if f.hasUnknown && r.member == "" {
		r.member = fmt.Sprintf("unknown member %q", r.join(f.obj, f.unknown))
	}
}

// is reports whether t is present and of kind k. A present value of another
// kind is a type problem; t == 0 is an absent member, already reported.
func (r *jsonReader) is(t int32, k jsonKind, want string) bool {
	if t == 0 {
		return false
	}
	if r.toks[t].kind == k {
		return true
	}
	if r.typ == "" {
		r.typ = fmt.Sprintf("%s is not %s", r.path(t), want)
	}
	return false
}

func (r *jsonReader) str(t int32) string {
	if !r.is(t, jsonString, "a string") {
		return ""
	}
	return r.stringAt(t)
}

// stringAt returns the value of string token t.
func (r *jsonReader) stringAt(t int32) string {
	tok := r.toks[t]
	if tok.plain {
		return r.text[tok.start:tok.end]
	}
	if s, ok := unescape(r.text[tok.start:tok.end]); ok {
		return s
	}
	var s string
	json.Unmarshal([]byte(r.text[tok.start-1:tok.end+1]), &s) // a string scanJSON accepted
	return s
}

// unescape decodes the text of a JSON string if it is valid UTF-8 with
// escapes other than \u, such as the newlines of every checkpoint; for
// anything else it leaves the work to encoding/json.
func unescape(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++ // scanJSON saw a valid escape
			switch c = s[i]; c {
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				return "", false
			}
		}
		b.WriteByte(c)
	}
	// Escapes stand for ASCII, which cannot mend a broken UTF-8 sequence:
	// the result is valid UTF-8 exactly when the unescaped parts are.
	if !utf8.ValidString(b.String()) {
		return "", false
	}
	return b.String(), true
}

// number returns the text of number t.
func (r *jsonReader) number(t int32) string {
	if !r.is(t, jsonNumber, "a number") {
		return ""
	}
	return r.text[r.toks[t].start:r.toks[t].end]
}

// int reads a number that must be a 64-bit integer, as encoding/json reads
// it into an int64: 1.0 and 1e3 are not integers.
func (r *jsonReader) int(t int32) int64 {
	s := r.number(t)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && r.value == "" {
		r.value = fmt.Sprintf("%s: %s is not a 64-bit integer", r.path(t), s)
	}
	return n
}

func (r *jsonReader) bool(t int32) bool {
	return r.is(t, jsonBool, "a boolean") && r.text[r.toks[t].start] == 't'
}

// time reads a time in the RFC 3339 subset of ParseTime.
func (r *jsonReader) time(t int32) time.Time {
	if !r.is(t, jsonString, "a string") {
		return time.Time{}
	}
	tm, err := ParseTime(r.stringAt(t))
	if err != nil && r.value == "" {
		r.value = r.path(t) + ": " + err.Error()
	}
	return tm
}

func (r *jsonReader) stringList(t int32) []string { return readArray(r, t, r.str) }

// readArray reads array t element by element. An empty array gives an
// empty slice, not nil.
func readArray[T any](r *jsonReader, t int32, read func(int32) T) []T {
	if !r.is(t, jsonArray, "an array") {
		return nil
	}
	n := 0
	for e := t + 1; e < r.toks[t].next; e = r.toks[e].next {
		n++
	}
	out := make([]T, n)
	for i, e := 0, t+1; i < n; i, e = i+1, r.toks[e].next {
		out[i] = read(e)
	}
	return out
}

// generic decodes value t as encoding/json does into an any, numbers as
// json.Number: the form reasons quote a wrong value in. Absent is nil.
func (r *jsonReader) generic(t int32) any {
	if t == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(r.raw(t)))
	dec.UseNumber()
	dec.Decode(&v) // a value scanJSON accepted
	return v
}

// raw is the JSON text of value t.
func (r *jsonReader) raw(t int32) string {
	tok := r.toks[t]
	if tok.kind == jsonString {
		return r.text[tok.start-1 : tok.end+1]
	}
	return r.text[tok.start:tok.end]
}

// path names value t for reasons: "layers[0].verify_queries[2]". The
// document itself is "". A member's name token is named as its member.
func (r *jsonReader) path(t int32) string {
	var b strings.Builder
	for c := int32(0); c != t; {
		// t is inside container c: step into the member or element holding it.
		if r.toks[c].kind == jsonObject {
			n := c + 1
			for r.toks[n+1].next <= t {
				n = r.toks[n+1].next
			}
			b.WriteString("." + r.stringAt(n))
			if n == t {
				break // t is the name, not inside the value, of this member
			}
			c = n + 1
		} else {
			e, i := c+1, 0
			for r.toks[e].next <= t {
				e, i = r.toks[e].next, i+1
			}
			b.WriteString("[" + strconv.Itoa(i) + "]")
			c = e
		}
	}
	return strings.TrimPrefix(b.String(), ".")
}

// join names member name of object obj.
func (r *jsonReader) join(obj int32, name string) string {
	if p := r.path(obj); p != "" {
		return p + "." + name
	}
	return name
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown
// members and trailing data. Log events, which are not on Verify's path
// (it compares leaf bytes exactly), are read with it.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
