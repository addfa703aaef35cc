package pcextract

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
)

// checkPineconeTags holds for every successful extraction: tags name the
// index, and writes and deletes name their record.
// Every string the ledger keys on is valid UTF-8.
func checkPineconeTags(t *testing.T, tags []extract.Tag) {
	for _, tag := range tags {
		if !utf8.ValidString(tag.Table) || !utf8.ValidString(tag.ID) {
			t.Fatalf("tag table or id is not valid UTF-8: %q %q", tag.Table, tag.ID)
		}
		for _, s := range tag.Subjects {
			if !utf8.ValidString(s) {
				t.Fatalf("subject is not valid UTF-8: %q", s)
			}
		}
		if !strings.HasPrefix(tag.Table, "docs/") {
			t.Fatalf("tag table %q does not name the index", tag.Table)
		}
		switch tag.Op {
		case extract.OpWrite, extract.OpDelete:
			if tag.ID == "" {
				t.Fatalf("op %d tag without id", tag.Op)
			}
		case extract.OpUnattributed:
			if tag.Reason == "" {
				t.Fatal("unattributed tag without reason")
			}
		case extract.OpDeleteAll, extract.OpDeleteByFilter:
			if tag.ID != "" {
				t.Fatalf("op %d tag with an id", tag.Op)
			}
		default:
			t.Fatalf("unknown op %d", tag.Op)
		}
	}
}

func FuzzPineconeREST(f *testing.F) {
	for _, s := range []string{
		`{"vectors":[{"id":"a","values":[0.1,2e-3],"sparseValues":{"indices":[1],"values":[0.5]},"metadata":{"user_id":"alice","n":[1,"x"]}}],"namespace":"team"}`,
		`{"id":"a","setMetadata":{"user_id":["a","b"],"owner":3},"namespace":"","dryRun":false}`,
		`{"filter":{"user_id":{"$eq":"a"}},"setMetadata":{"owner":"b"},"namespace":"team"}`,
		`{"ids":["a","b"],"deleteAll":false,"namespace":"__default__"}`,
		`{"vectors":[{"id":"a\u0041","metadata":{"user_\u0069d":"x","user_id":"y"}}]}`,
		`{"vectors":[{"id":1}]}`, `[]`, `{`, ``, `[1,[2,"]"],[[3]],{"a":[4]}]`,
		`{"vectors":[{"id":"a","metadata":{"user_id":4242.0}},{"id":"b","metadata":{"user_id":4.242e3}}]}`,
		`{"id":"a","setMetadata":{"user_id":4242E0}}`, `{"id":"a","setMetadata":{"user_id":1e400}}`,
		`{"vectors":[{"id":"a","metadata":{"user_id":-0.0}},{"id":"b","metadata":{"user_id":1e+21}}]}`,
		`{"vectors":[{"id":"a\ud800","metadata":{"user_id":"\ud83d\ude00\udc00"}}],"namespace":"\udfff"}`,
		"{\"vectors\":[{\"id\":\"a\xff\",\"metadata\":{\"user_id\":[\"\xed\xa0\x80\"]}}]}",
		`{"ids":["\ud800\u0041"]}`,
		`{"id":"a","set_metadata":{"user_id":"x"},"setMetadata":{}}`, `{"set\u005fmetadata":{"user_id":1},"filter":{}}`,
		`{"vectors":[{"id":"a","metadata":{"user_id":12345678901234567890}},{"id":"b","metadata":{"user_id":1.0000000000000001}}]}`,
		`{"id":"a","setMetadata":{"user_id":0e99999999999999999999}}`, `{"id":"a","setMetadata":{"user_id":1E-400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if json.Valid(body) {
			doc := string(body)
			v := strictjson.SkipSpace(doc, 0)
			if got, want := skipJSON(doc, v), strictjson.SkipValue(doc, v); got != want {
				t.Fatalf("skipJSON = %d, skipValue = %d", got, want)
			}
		}
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			for _, fn := range []func(*Rules, []byte) ([]extract.Tag, error){
				(*Rules).UpsertREST, (*Rules).UpdateREST, (*Rules).DeleteREST,
			} {
				tags, err := fn(r, body)
				if err == nil {
					checkPineconeTags(t, tags)
				}
			}
		}
	})
}

// FuzzPineconeRESTAgreesWithEncodingJSON checks the one-pass syntax check
// against encoding/json. For any input:
//
//   - UpdateREST and DeleteREST fail with a syntax error iff json.Valid
//     rejects the body: a shape error (a valid body Pinecone would refuse)
//     is never reported as a syntax error, and invalid JSON never passes;
//   - UpsertREST, which checks syntax while it walks, never reports a
//     syntax error for a valid body, and returns the same tags, and an
//     error for the same valid inputs, as upsertRESTTwoPass, which runs
//     json.Valid first and then walks the body trusting it;
//   - an invalid body UpsertREST accepts is invalid only inside the flat
//     arrays it steps over unchecked (flatNumbersEnd): with their contents
//     blanked it is valid JSON.
func FuzzPineconeRESTAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		``, ` `, `[]`, `{}`, `{"a":1,}`, `{,}`, `{"a"}`, `{1:2}`, `{"a":1 "b":2}`, `{}{}`, `{} x`, `{"a":[1}`,
		`{"a":"\u12"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\xfe\"}", `{"a":01}`, `{"a":1.}`, `{"a":-}`,
		`{"a":1e+}`, `{"a":tru}`, `{"a":nulll}`, "\f{}", "{}\x00",
		`{"vectors":[{"id":"a","values":[0.1,-2e-3,0],"metadata":{"user_id":"u","n":[1,"x"]}}],"namespace":"team"}`,
		`{"namespace":"team","vectors":[{"id":"a","metadata":{"owner":"o","members":["m"]}},{"id":"b"}]}`,
		`{"vectors":[{"id":"a"}],"vectors":{"id":"b"}}`, `{"vectors":[1,{"id":"a"}]}`,
		`{"namespace":1,"namespace":"team","vectors":[]}`, `{"namespace":"other","vectors":"x"}`,
		`{"vectors":[{"id":"a","id":2,"metadata":null}]}`, `{"vectors":[{"id":"a","values":[1,2,]}]}`,
		`{"vectors":[{"id":"a","values":[01]}]}`, `{"vectors":[{"id":"a\u00"}]}`, `{"vectors":[]} x`,
		`{"id":"a","setMetadata":{"user_id":"u"},"dryRun":null}`, `{"ids":["a","b"],"namespace":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(pcUpsertJSON(2, 4))
	f.Fuzz(func(t *testing.T, body []byte) {
		valid := json.Valid(body)
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			for _, fn := range []func(*Rules, []byte) ([]extract.Tag, error){
				(*Rules).UpdateREST, (*Rules).DeleteREST,
			} {
				_, err := fn(r, body)
				var syntax *strictjson.SyntaxError
				if errors.As(err, &syntax) == valid {
					t.Fatalf("json.Valid = %v, error = %v", valid, err)
				}
			}
			got, gotErr := r.UpsertREST(body)
			if !valid {
				if gotErr == nil && !json.Valid(blankFlatArrays(body)) {
					t.Fatalf("invalid outside flat arrays, yet tagged: %v", got)
				}
				continue
			}
			var syntax *strictjson.SyntaxError
			if errors.As(gotErr, &syntax) {
				t.Fatalf("json.Valid = true, error = %v", gotErr)
			}
			want, wantErr := r.upsertRESTTwoPass(body)
			if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("one pass: %v, %v; json.Valid then walk: %v, %v", got, gotErr, want, wantErr)
			}
		}
	})
}

func FuzzPineconeRecords(f *testing.F) {
	for _, s := range []string{
		"{\"_id\":\"a\",\"chunk_text\":\"hi\",\"user_id\":\"alice\"}\n{\"id\":\"b\",\"owner\":2,\"members\":[\"x\"]}\n",
		"\r\n\n{\"_id\":\"a\"}", "{\"_id\":", "[1]\n", "",
		"{\"_id\":\"a\",\"user_id\":4242.0}\n{\"_id\":\"b\",\"user_id\":1e400}",
		"{\"_id\":\"\\ud800\",\"user_id\":\"\xff\"}",
	} {
		f.Add(s, []byte(s))
	}
	f.Add("n\xff", []byte("{\"_id\":\"a\"}"))
	f.Fuzz(func(t *testing.T, ns string, body []byte) {
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			for _, n := range []string{"", "team", ns} {
				tags, err := r.UpsertRecordsREST(n, body)
				if err == nil {
					checkPineconeTags(t, tags)
				}
			}
		}
	})
}

func FuzzPineconeGRPC(f *testing.F) {
	meta := pbStruct(pbEntry("user_id", pbValueString("alice")), pbEntry("members", pbValueList(pbValueString("x"), pbValueNumber(1))),
		pbEntry("owner", pbValueNumber(3)))
	for _, s := range [][]byte{
		pbUpsert("team", pbVector("a", 3, meta), pbVector("b", 2, nil)),
		pbUpsert(pbAbsent, pbVector("a", 3, meta)),
		pbUpdate("a", meta, "", nil, false),
		pbUpdate("", meta, "team", pbStruct(pbEntry("g", pbValueBool(true))), false),
		pbUpdate("", meta, "team", nil, true),
		pbDelete([]string{"a", "b"}, true, "team", meta),
		{0x80}, {0x0a, 0x05}, nil,
		pbUpsert("n\xff", pbVector("a\xff", 1, pbStruct(pbEntry("user_id", pbValueString("\xed\xa0\x80"))))),
		pbUpsert(pbAbsent, pbVector("a", 1, pbStruct(pbEntry("user_id", pbValueNumber(math.Inf(1)))))),
		pbDelete([]string{"\xff"}, false, "\xc0", nil),
		pbUpsert("elsewhere", append(pbString(1, "a"), protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 1)...)),
		pbUpsert(pbAbsent, append(pbString(1, "a"), pbMsg(4, pbMsg(1, []byte{0x80}))...)),
		pbUpsert(pbAbsent, append(pbString(1, "a"), pbMsg(3, pbEntry("n", pbVarint(2, 1)))...)),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			for _, fn := range []func(*Rules, []byte) ([]extract.Tag, error){
				(*Rules).UpsertGRPC, (*Rules).UpdateGRPC, (*Rules).DeleteGRPC, (*Rules).DeleteNamespaceGRPC,
			} {
				tags, err := fn(r, msg)
				if err == nil {
					checkPineconeTags(t, tags)
				}
			}
		}
	})
}

// blankFlatArrays blanks the contents of every array flatNumbersEnd would
// step over, wherever it is (inside strings too, which blanks stay valid
// in).
func blankFlatArrays(body []byte) []byte {
	out := bytes.Clone(body)
	for i := 0; i < len(out); i++ {
		if end, ok := flatNumbersEnd(string(out), i); ok {
			for j := i + 1; j < end-1; j++ {
				out[j] = ' '
			}
			i = end - 1
		}
	}
	return out
}

// FuzzPineconeNumberSubject checks the JSON number text against
// math/big: a number is accepted iff a float64 holds it as written, that
// is iff its decimal value is that of the subject's text.
func FuzzPineconeNumberSubject(f *testing.F) {
	for _, s := range []string{"4242", "4242.0", "4.242e3", "-0", "0e-5", "1e+21", "1e23", "0.1", "0.30000000000000004",
		"12345678901234567890", "1.0000000000000001", "1e-400", "5e-324", "1e308", "1e400", "-12.5E-1", "100e-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var n json.Number
		if json.Unmarshal([]byte(text), &n) != nil || n.String() != text {
			return // not one JSON number
		}
		mantissa, exp, _ := strings.Cut(strings.ToLower(text), "e")
		if e, err := strconv.Atoi(exp); exp != "" && (err != nil || e > 1000 || e < -1000) || len(mantissa) > 400 {
			return // big.Rat would be slow; decimalParts' exponent arithmetic is checked by the unit tests
		}
		s, err := jsonNumberSubject(text)
		f64, rangeErr := strconv.ParseFloat(text, 64)
		if rangeErr != nil {
			if err == nil {
				t.Fatalf("%s beyond float64 accepted as %s", text, s)
			}
			return
		}
		canon, _ := NumberSubject(f64)
		written, _ := new(big.Rat).SetString(text)
		kept, _ := new(big.Rat).SetString(canon)
		if exact := written.Cmp(kept) == 0; exact != (err == nil) {
			t.Fatalf("%s: kept as %s, exact %v, error %v", text, canon, exact, err)
		}
		if err == nil && s != canon {
			t.Fatalf("%s named %s, not %s", text, s, canon)
		}
	})
}
