package pcextract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The depth limit counts the containers the extractor walks itself as well
// as those it leaves to value.
func TestUpsertREST_NestingLimitCountsFromTheRoot(t *testing.T) {
	deep := func(n int) []byte { // the metadata value is nested n deep in the body
		return []byte(`{"vectors":[{"id":"a","metadata":{"x":` + strings.Repeat("[", n-4) + strings.Repeat("]", n-4) + `}}]}`)
	}
	for _, n := range []int{strictjson.MaxDepth, strictjson.MaxDepth + 1} {
		body := deep(n)
		_, err := pcRules(t).UpsertREST(body)
		assert.Equal(t, json.Valid(body), err == nil, "depth %d: %v", n, err)
	}
}

func TestPineconeREST_SyntaxErrorsNameFieldAndPosition(t *testing.T) {
	const secret = "s3cret"
	cases := []struct {
		name string
		fn   func(*Rules, []byte) ([]extract.Tag, error)
		body string
		says []string
	}{
		{"bad number in sparse values", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","values":[0.5]},{"id":"b","sparseValues":{"indices":[1],"values":[0.1,0.2.3]}}]}`,
			[]string{"upsert body is not a valid JSON object", "vectors[1].sparseValues"}},
		{"bad escape in metadata", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","metadata":{"user_id":"s3cret\q"}}]}`,
			[]string{"bad escape", "at byte 52", "vectors[0].metadata"}},
		{"client's keys are not named", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","s3cret":[1,}]}`,
			[]string{"at byte 34", "in vectors[0])"}},
		{"truncated", (*Rules).UpsertREST,
			`{"namespace":"s3cret","vectors":[{"id":"a","values":[0.1,`,
			[]string{"unexpected end of the body", "at byte 57", "vectors[0].values"}},
		{"after the object", (*Rules).UpsertREST, `{"vectors":[]} s3cret`, []string{"at byte 15", "in the body"}},
		{"not an object, and invalid", (*Rules).UpsertREST, `["s3cret",]`, []string{"at byte 10"}},
		{"update", (*Rules).UpdateREST, `{"id":"a","values":[1,-]}`, []string{"update body", "at byte 23"}},
		{"delete", (*Rules).DeleteREST, `{"ids":["s3cret"] "x"}`, []string{"delete body", "at byte 18"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := c.fn(pcRules(t), []byte(c.body))
			require.Error(t, err)
			assert.Nil(t, tags)
			var syntax *strictjson.SyntaxError
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
	assert.Equal(t, []extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}, tags)

	tags, err = pcRules(t).UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1,"]}],\"metadata\":{\"user_id\":\"bob\"}"],"metadata":{"user_id":"alice"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}, tags,
		"a string in values holding a ']' and a decoy metadata is read as the string it is")
	_, err = pcRules(t).UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1,2`))
	assert.ErrorContains(t, err, "unexpected end of the body", "an array without its ']' is checked in full")
}
