package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// edgeCases are documents at the edges of JSON's grammar, valid and not; a
// Walker must judge each as json.Valid does.
var edgeCases = []string{
	``, ` `, `{}`, `[]`, ` {"a" : [ 1 , 2 ] } `, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`{"a":1 "b":2}`, `[1 2]`, `{}{}`, `{} x`, `[1]]`, `[[1]`, `{"a":[1}`, `"\u00e9\n\"\\\/\b\f\r\t"`,
	`"\u12"`, `"\u12G4"`, `"\x"`, "\"a\x01b\"", "\"a\x7fb\"", "\"\xff\xfe\"", `"abc`, `"\`,
	`0`, `-0`, `01`, `-01`, `1.`, `.5`, `1.5`, `-`, `--1`, `+1`, `1e`, `1e+`, `1E-5`, `1e5.0`, `0.0e-0`,
	`1.2.3`, `-0.4993489`, `123456789012345678901234567890`, `1ee5`, `0x10`, `[1e400]`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `True`, `[true,false,null]`, `[nan]`, `[Infinity]`,
	"\t\n\r [1]\r\n", "\f[1]", "[1]\x00", `{"a":{"b":{"c":[[[]]]}}}`, `{"a":"}"}`, `["]"]`,
	`[1,2,-3.5e+2,0,-0]`, `[1,2,"x"]`, `[1,2,]`, `[1,01]`, `[1,-]`, `[1,2.]`, `[1,2e]`, `[1 ,2]`, `[1, 2]`,
	`{"\t\"\\\/":"\b\f\n\r\u00e9\ud800"}`, "{\"\xc3\\n\xa9\":\"\xe2\x80\x94\\n\"}", "\ufeff{}",
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth),
	strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
}

func TestWalker_AgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range edgeCases {
		w := Walker{Doc: doc}
		w.Document()
		name := doc
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if got, want := w.Err() == nil, json.Valid([]byte(doc)); got != want {
			t.Errorf("%q: walker accepts: %t, json.Valid: %t (%v)", name, got, want, w.Err())
		}
	}
}

// FuzzWalker_AgreesWithEncodingJSON holds the walker to encoding/json: it
// accepts a document iff json.Valid does, and a rejection is a
// *SyntaxError at an offset inside the document.
func FuzzWalker_AgreesWithEncodingJSON(f *testing.F) {
	for _, s := range edgeCases {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := Walker{Doc: string(data)}
		w.Document()
		if valid := json.Valid(data); (w.Err() == nil) != valid {
			t.Fatalf("json.Valid = %t, walker error = %v", valid, w.Err())
		}
		var syntax *SyntaxError
		if err := w.Err(); err != nil && (!errors.As(err, &syntax) || syntax.Pos > len(data)) {
			t.Fatalf("error %v is not a syntax error inside the document", err)
		}
	})
}

// A walker stepping through a document itself sees the same values Value
// would, and an error names the offset and the Field set when it was met,
// not one set later.
func TestWalker_ErrorNamesTheFieldBeingRead(t *testing.T) {
	const doc = `{"a":[1,{"b":tru}],"c":2}`
	w := Walker{Doc: doc}
	j, more := w.OpenObject(w.Space(0))
	for more {
		name, v := w.Member(j)
		w.Field = Field{Name: name[1 : len(name)-1], Index: -1}
		j, more = w.NextMember(w.Value(v))
	}
	w.Field = Field{}
	w.End(j)
	const want = "expected true at byte 13 (in a)"
	if err := w.Err(); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestField_String(t *testing.T) {
	for _, c := range []struct {
		f    Field
		want string
	}{
		{Field{}, "the body"},
		{Field{Index: 3}, "the body"},
		{Field{Name: "vectors", Index: -1}, "vectors"},
		{Field{Name: "vectors", Index: 2}, "vectors[2]"},
		{Field{Name: "vectors", Index: 2, Member: "values"}, "vectors[2].values"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.f, got, c.want)
		}
	}
}
