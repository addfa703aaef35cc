package pcextract

import (
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/internal/strictjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type pcCase struct {
	name string
	any  bool // use pcRulesAny instead of pcRules
	body string
	want []extract.Tag
}

func runPCCases(t *testing.T, cases []pcCase, fn func(*Rules, []byte) ([]extract.Tag, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := pcRules(t)
			if c.any {
				r = pcRulesAny(t)
			}
			tags, err := fn(r, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, c.want, tags)
		})
	}
}

func TestUpsertREST(t *testing.T) {
	runPCCases(t, []pcCase{
		{"absent namespace is the default", false,
			`{"vectors":[{"id":"a","values":[0.1,0.2],"metadata":{"user_id":"alice","text":"hi"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"empty namespace is the default", false,
			`{"namespace":"","vectors":[{"id":"a","values":[0.1],"metadata":{"user_id":"alice"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"__default__ namespace, after the vectors", false,
			`{"vectors":[{"id":"a","values":[0.1],"metadata":{"user_id":"alice"}}],"namespace":"__default__"}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"null namespace is the default", false,
			`{"namespace":null,"vectors":[{"id":"a","metadata":{"user_id":"alice"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"several vectors, sparse values skipped", false,
			`{"vectors":[{"id":"a","values":[1e-3,-2.5E+2],"sparseValues":{"indices":[1,2],"values":[0.5,0.25]},"metadata":{"user_id":"alice"}},
			  {"id":"b","values":[],"metadata":{"user_id":"bob"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}},
				{Table: "docs/__default__", Op: extract.OpWrite, ID: "b", Subjects: []string{"bob"}}}},
		{"number subject in its one text form, not as written", false,
			`{"vectors":[{"id":"a","metadata":{"user_id":42}},{"id":"b","metadata":{"user_id":1.50}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"42"}},
				{Table: "docs/__default__", Op: extract.OpWrite, ID: "b", Subjects: []string{"1.5"}}}},
		{"list of strings gives several subjects; two subject fields", false,
			`{"namespace":"team","vectors":[{"id":"a","metadata":{"members":["bob","carol"],"owner":"alice"}}]}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice", "bob", "carol"}}}},
		{"no subject, bool, null, object: tagged without subjects", false,
			`{"vectors":[{"id":"a","values":[1]},{"id":"b","metadata":{"user_id":true}},{"id":"c","metadata":{"user_id":null}},{"id":"d","metadata":{"user_id":{"x":"y"}}},{"id":"e","metadata":null}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a"}, {Table: "docs/__default__", Op: extract.OpWrite, ID: "b"},
				{Table: "docs/__default__", Op: extract.OpWrite, ID: "c"}, {Table: "docs/__default__", Op: extract.OpWrite, ID: "d"},
				{Table: "docs/__default__", Op: extract.OpWrite, ID: "e"}}},
		{"a repeated metadata key that is no subject field is let be", false,
			`{"vectors":[{"id":"a","metadata":{"x":1,"x":2,"user_id":"new"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"new"}}}},
		{"escaped strings decoded", false,
			`{"vectors":[{"id":"a\"1","metadata":{"user_\u0069d":"al\u00efce"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a\"1", Subjects: []string{"alïce"}}}},
		{"uncovered namespace yields nothing", false,
			`{"namespace":"other","vectors":[{"id":"a","metadata":{"user_id":"alice"}}]}`,
			nil},
		{"* covers a namespace without its own rule", true,
			`{"namespace":"other","vectors":[{"id":"a","metadata":{"user_id":"alice","owner":"x"}}]}`,
			[]extract.Tag{{Table: "docs/other", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"a namespace's own rule wins over *", true,
			`{"namespace":"team","vectors":[{"id":"a","metadata":{"user_id":"alice","owner":"olga"}}]}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"olga"}}}},
		{"* covers the default namespace", true,
			`{"vectors":[{"id":"a","metadata":{"user_id":"alice"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
	}, (*Rules).UpsertREST)
}

func TestUpdateREST(t *testing.T) {
	runPCCases(t, []pcCase{
		{"by id, setMetadata moves the record to another subject", false,
			`{"id":"a","values":[0.5],"setMetadata":{"user_id":"bob","text":"x"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
		{"by id, namespace __default__, number subject", false,
			`{"id":"a","setMetadata":{"user_id":7},"namespace":"__default__"}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"7"}}}},
		{"by id, setting a subject field to a non-subject value", false,
			`{"id":"a","setMetadata":{"user_id":false}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a"}}},
		{"by id, list subject in a namespace with two fields", false,
			`{"id":"a","setMetadata":{"members":["x","y"]},"namespace":"team"}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"x", "y"}}}},
		{"by id, no subject field set", false,
			`{"id":"a","values":[1,2],"setMetadata":{"text":"x"}}`, nil},
		{"by id, values only", false, `{"id":"a","values":[1,2],"sparseValues":{"indices":[1],"values":[2]}}`, nil},
		{"by filter setting a subject field is unattributed", false,
			`{"filter":{"user_id":{"$eq":"alice"}},"setMetadata":{"user_id":"bob"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpUnattributed, Reason: pcRules(t).unattributedUpdate("__default__", []string{"user_id"}).Reason}}},
		{"by filter with an empty id", false,
			`{"id":"","filter":{"genre":"x"},"setMetadata":{"user_id":"bob"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpUnattributed, Reason: pcRules(t).unattributedUpdate("__default__", []string{"user_id"}).Reason}}},
		{"by filter setting no subject field", false,
			`{"filter":{"user_id":"alice"},"setMetadata":{"text":"x"}}`, nil},
		{"dry run", false,
			`{"filter":{"genre":"x"},"setMetadata":{"user_id":"bob"},"dryRun":true}`, nil},
		{"dry run false is a real update", false,
			`{"id":"a","setMetadata":{"user_id":"bob"},"dryRun":false}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
		{"uncovered namespace", false, `{"id":"a","setMetadata":{"user_id":"bob"},"namespace":"other"}`, nil},
		{"* covers", true, `{"id":"a","setMetadata":{"user_id":"bob"},"namespace":"other"}`,
			[]extract.Tag{{Table: "docs/other", Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
	}, (*Rules).UpdateREST)
}

// A REST front decoding with protojson reads the proto field name
// set_metadata as setMetadata: an update spelled so moves the record too.
func TestUpdateREST_ProtoFieldNameSetMetadataIsRead(t *testing.T) {
	runPCCases(t, []pcCase{
		{"by id", false, `{"id":"a","set_metadata":{"user_id":"alice"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"by id, escaped name", false, `{"id":"a","set\u005fmetadata":{"user_id":4242.0}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"4242"}}}},
		{"by filter", false, `{"filter":{"genre":"x"},"set_metadata":{"user_id":"bob"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpUnattributed, Reason: pcRules(t).unattributedUpdate("__default__", []string{"user_id"}).Reason}}},
		{"dry_run is not trusted to leave it undone", false, `{"id":"a","setMetadata":{"user_id":"bob"},"dry_run":true}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
	}, (*Rules).UpdateREST)
	for _, body := range []string{
		`{"id":"a","setMetadata":{"text":"x"},"set_metadata":{"user_id":"alice"}}`,
		`{"id":"a","set_metadata":{"user_id":"alice"},"setMetadata":{"text":"x"}}`,
	} {
		_, err := pcRules(t).UpdateREST([]byte(body))
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), `"setMetadata" appears more than once`)
		assert.NotContains(t, err.Error(), "alice")
	}
}

func TestDeleteREST(t *testing.T) {
	runPCCases(t, []pcCase{
		{"by ids", false, `{"ids":["a","b"]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpDelete, ID: "a"}, {Table: "docs/__default__", Op: extract.OpDelete, ID: "b"}}},
		{"by ids in a namespace", false, `{"ids":["a"],"namespace":"team"}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpDelete, ID: "a"}}},
		{"by ids, empty namespace", false, `{"ids":["a"],"namespace":""}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpDelete, ID: "a"}}},
		{"delete all marks the namespace", false, `{"deleteAll":true,"namespace":"team"}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpDeleteAll}}},
		{"deleteAll false yields nothing", false, `{"deleteAll":false,"namespace":"team"}`, nil},
		{"delete all of an uncovered namespace yields nothing", false, `{"deleteAll":true,"namespace":"other"}`, nil},
		{"by filter marks the namespace for settling", false, `{"filter":{"user_id":"alice"}}`, []extract.Tag{{Table: "docs/__default__", Op: extract.OpDeleteByFilter}}},
		{"a filter that is not an object yields nothing", false, `{"filter":null}`, nil},
		{"uncovered namespace", false, `{"ids":["a"],"namespace":"other"}`, nil},
		{"* covers", true, `{"ids":["a"],"namespace":"other"}`, []extract.Tag{{Table: "docs/other", Op: extract.OpDelete, ID: "a"}}},
	}, (*Rules).DeleteREST)
}

func TestPineconeREST_MalformedBodiesAreErrorsWithoutValues(t *testing.T) {
	const secret = "s3cret-subject"
	cases := []struct {
		name string
		fn   func(*Rules, []byte) ([]extract.Tag, error)
		body string
		says string
	}{
		{"upsert not JSON", (*Rules).UpsertREST, `{"vectors":[{"id":"s3cret-subject"`, "not a valid JSON object"},
		{"upsert not an object", (*Rules).UpsertREST, `["s3cret-subject"]`, "not a valid JSON object"},
		{"upsert no vectors", (*Rules).UpsertREST, `{"vector":"s3cret-subject"}`, `"vectors"`},
		{"upsert vectors not an array", (*Rules).UpsertREST, `{"vectors":{"id":"s3cret-subject"}}`, `"vectors"`},
		{"upsert vector not an object", (*Rules).UpsertREST, `{"vectors":[{"id":"a"},"s3cret-subject"]}`, "vectors[1]"},
		{"upsert id not a string", (*Rules).UpsertREST, `{"vectors":[{"id":["s3cret-subject"]}]}`, "vectors[0]"},
		{"upsert missing id", (*Rules).UpsertREST, `{"vectors":[{"metadata":{"user_id":"s3cret-subject"}}]}`, "vectors[0]"},
		{"upsert metadata not an object", (*Rules).UpsertREST, `{"vectors":[{"id":"a","metadata":"s3cret-subject"}]}`, "vectors[0].metadata"},
		{"upsert namespace not a string", (*Rules).UpsertREST, `{"namespace":["s3cret-subject"],"vectors":[]}`, `"namespace"`},
		{"update not JSON", (*Rules).UpdateREST, `s3cret-subject`, "not a valid JSON object"},
		{"update id not a string", (*Rules).UpdateREST, `{"id":{"s3cret-subject":1}}`, `"id"`},
		{"update setMetadata not an object", (*Rules).UpdateREST, `{"id":"a","setMetadata":"s3cret-subject"}`, `"setMetadata"`},
		{"update dryRun not a boolean", (*Rules).UpdateREST, `{"id":"a","dryRun":"s3cret-subject"}`, `"dryRun"`},
		{"delete ids not an array", (*Rules).DeleteREST, `{"ids":"s3cret-subject"}`, `"ids"`},
		{"delete id not a string", (*Rules).DeleteREST, `{"ids":["a",{"s3cret-subject":1}]}`, "ids[1]"},
		{"delete namespace not a string", (*Rules).DeleteREST, `{"ids":["a"],"namespace":{"s3cret-subject":1}}`, `"namespace"`},
		// Members read twice in one object, which parsers resolve
		// differently (the first, the last, or an error): refused.
		{"upsert vectors twice", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","metadata":{"user_id":"s3cret-subject"}}],"vectors":[{"id":"b"}]}`, `"vectors" appears more than once`},
		{"upsert namespace twice", (*Rules).UpsertREST, `{"namespace":"x","vectors":[],"namespace":"y"}`, `"namespace" appears more than once`},
		{"upsert id twice", (*Rules).UpsertREST, `{"vectors":[{"id":"s3cret-subject","id":"b"}]}`, `vectors[0]."id" appears more than once`},
		{"upsert metadata twice", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","metadata":{"user_id":"s3cret-subject"},"metadata":{"x":1}}]}`, `vectors[0]."metadata" appears more than once`},
		{"upsert subject field twice", (*Rules).UpsertREST,
			`{"vectors":[{"id":"a","metadata":{"user_id":"s3cret-subject","user_id":"b"}}]}`, `vectors[0].metadata: subject field "user_id" appears more than once`},
		{"update setMetadata twice", (*Rules).UpdateREST,
			`{"id":"a","setMetadata":{"user_id":"s3cret-subject"},"setMetadata":{"x":1}}`, `"setMetadata" appears more than once`},
		{"update id twice", (*Rules).UpdateREST, `{"id":"a","id":"","setMetadata":{"user_id":"s3cret-subject"}}`, `"id" appears more than once`},
		{"update dryRun twice", (*Rules).UpdateREST, `{"id":"a","dryRun":true,"dryRun":false,"setMetadata":{"user_id":"s3cret-subject"}}`, `"dryRun" appears more than once`},
		{"update subject field twice", (*Rules).UpdateREST, `{"id":"a","setMetadata":{"user_id":"s3cret-subject","user_id":"b"}}`, `setMetadata: subject field "user_id"`},
		{"delete ids twice", (*Rules).DeleteREST, `{"ids":["s3cret-subject"],"ids":["b"]}`, `"ids" appears more than once`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := c.fn(pcRules(t), []byte(c.body))
			require.Error(t, err)
			assert.Nil(t, tags)
			assert.Contains(t, err.Error(), c.says)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}

// The relay reuses its buffers: tags must not share memory with the body.
func TestPineconeREST_TagsDoNotAliasTheBody(t *testing.T) {
	body := []byte(`{"vectors":[{"id":"abc","metadata":{"user_id":"alice"}},{"id":"d","metadata":{"user_id":12}}]}`)
	tags, err := pcRules(t).UpsertREST(body)
	require.NoError(t, err)
	for i := range body {
		body[i] = 'X'
	}
	assert.Equal(t, "abc", tags[0].ID)
	assert.Equal(t, []string{"alice"}, tags[0].Subjects)
	assert.Equal(t, []string{"12"}, tags[1].Subjects)
	assert.Equal(t, "docs/__default__", tags[0].Table)
}

func TestPineconeREST_EmptyIDsAreErrors(t *testing.T) {
	r := pcRules(t)
	_, err := r.UpsertREST([]byte(`{"vectors":[{"id":""}]}`))
	assert.ErrorContains(t, err, "vectors[0]")
	_, err = r.DeleteREST([]byte(`{"ids":["a",""]}`))
	assert.ErrorContains(t, err, "ids[1]")
	_, err = r.UpsertRecordsREST("", []byte(`{"_id":""}`))
	assert.ErrorContains(t, err, "line 1")
	_, err = r.DeleteGRPC(pbDelete([]string{"a", ""}, false, pbAbsent, nil))
	assert.ErrorContains(t, err, "ids[1]")
}

func TestSkipJSON_SameAsSkipValue(t *testing.T) {
	for _, doc := range []string{
		`[]`, `[1,2.5e-3,-4]`, `[ 1 , 2 ] `, `[[1,2],[3]]`, `[1,[2,"]"],3]`, `["a]",1]`,
		`{"values":[1,2],"x":{"y":[3,{"z":"]"}]}}`, `[[[[1]]],[[2,[3]]]]`, `{"a":[true,null,false]}`,
		`[{"id":"a","values":[1,2]},{"id":"b","values":[3]}]`, `"str"`, `12`, `null`,
	} {
		assert.Equal(t, strictjson.SkipValue(doc, 0), skipJSON(doc, 0), doc)
	}
}
