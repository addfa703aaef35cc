package extract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonCheckCases are documents at the edges of JSON's grammar, valid and
// not; jsonCheck must judge each as json.Valid does.
var jsonCheckCases = []string{
	``, ` `, `{}`, `[]`, ` {"a" : [ 1 , 2 ] } `, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`{"a":1 "b":2}`, `[1 2]`, `{}{}`, `{} x`, `[1]]`, `[[1]`, `{"a":[1}`, `"\u00e9\n\"\\\/\b\f\r\t"`,
	`"\u12"`, `"\u12G4"`, `"\x"`, "\"a\x01b\"", "\"a\x7fb\"", "\"\xff\xfe\"", `"abc`, `"\`,
	`0`, `-0`, `01`, `-01`, `1.`, `.5`, `1.5`, `-`, `--1`, `+1`, `1e`, `1e+`, `1E-5`, `1e5.0`, `0.0e-0`,
	`1.2.3`, `-0.4993489`, `123456789012345678901234567890`, `1ee5`, `0x10`, `[1e400]`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `True`, `[true,false,null]`, `[nan]`, `[Infinity]`,
	"\t\n\r [1]\r\n", "\f[1]", "[1]\x00", `{"a":{"b":{"c":[[[]]]}}}`, `{"a":"}"}`, `["]"]`,
	strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
	strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth),
	strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1),
}

func TestJSONCheck_AgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range jsonCheckCases {
		c := jsonCheck{doc: doc}
		c.document()
		name := doc
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		assert.Equal(t, json.Valid([]byte(doc)), c.err == nil, "%q: %v", name, c.err)
	}
}

// The depth limit counts the containers the extractor walks itself as well
// as those it leaves to value.
func TestUpsertREST_NestingLimitCountsFromTheRoot(t *testing.T) {
	deep := func(n int) []byte { // the metadata value is nested n deep in the body
		return []byte(`{"vectors":[{"id":"a","metadata":{"x":` + strings.Repeat("[", n-4) + strings.Repeat("]", n-4) + `}}]}`)
	}
	for _, n := range []int{maxJSONDepth, maxJSONDepth + 1} {
		body := deep(n)
		_, err := pcRules(t).UpsertREST(body)
		assert.Equal(t, json.Valid(body), err == nil, "depth %d: %v", n, err)
	}
}

func TestPineconeREST_SyntaxErrorsNameFieldAndPosition(t *testing.T) {
	const secret = "s3cret"
	cases := []struct {
		name string
		fn   func(*PineconeRules, []byte) ([]Tag, error)
		body string
		says []string
	}{
		{"bad number in sparse values", (*PineconeRules).UpsertREST,
			`{"vectors":[{"id":"a","values":[0.5]},{"id":"b","sparseValues":{"indices":[1],"values":[0.1,0.2.3]}}]}`,
			[]string{"upsert body is not a valid JSON object", "vectors[1].sparseValues"}},
		{"bad escape in metadata", (*PineconeRules).UpsertREST,
			`{"vectors":[{"id":"a","metadata":{"user_id":"s3cret\q"}}]}`,
			[]string{"bad escape", "at byte 52", "vectors[0].metadata"}},
		{"client's keys are not named", (*PineconeRules).UpsertREST,
			`{"vectors":[{"id":"a","s3cret":[1,}]}`,
			[]string{"at byte 34", "in vectors[0])"}},
		{"truncated", (*PineconeRules).UpsertREST,
			`{"namespace":"s3cret","vectors":[{"id":"a","values":[0.1,`,
			[]string{"unexpected end of the body", "at byte 57", "vectors[0].values"}},
		{"after the object", (*PineconeRules).UpsertREST, `{"vectors":[]} s3cret`, []string{"at byte 15", "in the body"}},
		{"not an object, and invalid", (*PineconeRules).UpsertREST, `["s3cret",]`, []string{"at byte 10"}},
		{"update", (*PineconeRules).UpdateREST, `{"id":"a","values":[1,-]}`, []string{"update body", "at byte 23"}},
		{"delete", (*PineconeRules).DeleteREST, `{"ids":["s3cret"] "x"}`, []string{"delete body", "at byte 18"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := c.fn(pcRules(t), []byte(c.body))
			require.Error(t, err)
			assert.Nil(t, tags)
			var syntax *jsonSyntaxError
			assert.True(t, errors.As(err, &syntax), "%v is not a syntax error", err)
			for _, s := range c.says {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), secret)
		})
	}
	_, err := pcRules(t).UpsertRecordsREST("", []byte("{\"_id\":\"a\"}\n{\"_id\":\"s3cret\",}"))
	assert.ErrorContains(t, err, "line 2 is not valid JSON: expected a member name at byte 16")
}

// A vector's "values" array of plain numbers is stepped over unchecked: a
// malformed number there is left for Pinecone to refuse. An array there
// holding anything that could change the structure (a string, an object,
// an array) is checked in full, and tags come from the structure a full
// check sees.
func TestUpsertREST_FlatValuesAreSteppedOverUnchecked(t *testing.T) {
	tags, err := pcRules(t).UpsertREST([]byte(`{"vectors":[{"id":"a","values":[0.1,0.2.3,x],"metadata":{"user_id":"alice"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []Tag{{Table: "docs/__default__", Op: OpWrite, ID: "a", Subjects: []string{"alice"}}}, tags)

	tags, err = pcRules(t).UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1,"]}],\"metadata\":{\"user_id\":\"bob\"}"],"metadata":{"user_id":"alice"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []Tag{{Table: "docs/__default__", Op: OpWrite, ID: "a", Subjects: []string{"alice"}}}, tags,
		"a string in values holding a ']' and a decoy metadata is read as the string it is")
	_, err = pcRules(t).UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1,2`))
	assert.ErrorContains(t, err, "unexpected end of the body", "an array without its ']' is checked in full")
}
