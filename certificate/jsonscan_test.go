package certificate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// FuzzScanJSON holds the reader to encoding/json: scanJSON must accept
// exactly the objects encoding/json decodes, and strings must read the same,
// or a certificate's verdict would depend on which of the two read it.
func FuzzScanJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a" : [1, -2.5e+3, {"b":null}], "c":"\u00e9\n", "d":true} `, `[1]`, `{"a":1}x`, `{"a":1}{}`,
		`{"\t\"\\\/":"\b\f\n\r\u00e9\ud800"}`, "{\"\xc3\\n\xa9\":\"\xe2\x80\x94\\n\"}", "{\"a\":\"\xff\"}",
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":"\u12"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}",
		`{"a":tru}`, `{"a":1,}`, `{"a":[1,]}`, `{,}`, `{"a"}`, "\ufeff{}", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, ok := scanJSON(string(data), nil)
		ok = ok && toks[0].kind == jsonObject
		if _, err := decodeObject(string(data)); ok != (err == nil) {
			t.Fatalf("scanJSON accepts: %t; encoding/json: %v", ok, err)
		}
		r := jsonReader{text: string(data), toks: toks}
		for i, tok := range toks {
			if tok.kind != jsonString {
				continue
			}
			var want string
			if err := json.Unmarshal([]byte(r.raw(int32(i))), &want); err != nil || r.stringAt(int32(i)) != want {
				t.Fatalf("string %s reads as %q; encoding/json: %q, %v", r.raw(int32(i)), r.stringAt(int32(i)), want, err)
			}
		}
	})
}

func TestScanJSON_NestsAsDeepAsEncodingJSON(t *testing.T) {
	for _, depth := range []int{strictjson.MaxDepth, strictjson.MaxDepth + 1} {
		s := `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}"
		toks, ok := scanJSON(s, nil)
		ok = ok && toks[0].kind == jsonObject
		if _, err := decodeObject(s); ok != (err == nil) {
			t.Errorf("depth %d: scanJSON accepts: %t; encoding/json: %v", depth, ok, err)
		}
	}
}
