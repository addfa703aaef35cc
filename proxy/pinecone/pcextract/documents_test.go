package pcextract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
)

// docCase is one documents write: the path's namespace and the body.
type docCase struct {
	name string
	ns   string
	body string
	want []extract.Tag
}

func runDocCases(t *testing.T, cases []docCase, fn func(*Rules, string, []byte) ([]extract.Tag, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := fn(pcRules(t), c.ns, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, c.want, tags)
		})
	}
}

func docTag(ns string, op extract.Op, id string, subjects ...string) extract.Tag {
	return extract.Tag{Table: "docs/" + ns, Op: op, ID: id, Subjects: subjects}
}

func TestUpsertDocumentsREST(t *testing.T) {
	runDocCases(t, []docCase{
		{"subjects at the top level; vectors and _values skipped", "__default__",
			`{"documents":[{"_id":"a","title":"x","user_id":"alice","embedding":[0.1,-2e3],"sparse":{"indices":[1],"values":[0.5]},"_values":[1,2]},
			  {"_id":"b","user_id":"bob"}]}`,
			[]extract.Tag{docTag("__default__", extract.OpWrite, "a", "alice"), docTag("__default__", extract.OpWrite, "b", "bob")}},
		{"empty path namespace is the default", "",
			`{"documents":[{"_id":"a","user_id":"alice"}]}`,
			[]extract.Tag{docTag("__default__", extract.OpWrite, "a", "alice")}},
		{"metadata nested is not a top-level field", "__default__",
			`{"documents":[{"_id":"a","metadata":{"user_id":"alice"}}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a"}}},
		{"two subject fields, a list, a number in its one text form", "team",
			`{"documents":[{"_id":"a","owner":4.242e3,"members":["bob","carol"]}]}`,
			[]extract.Tag{docTag("team", extract.OpWrite, "a", "4242", "bob", "carol")}},
		{"escaped member names read as Pinecone reads them", "__default__",
			`{"d\u006fcuments":[{"\u005fid":"a\u0041","user\u005fid":"\u0061lice"}]}`,
			[]extract.Tag{docTag("__default__", extract.OpWrite, "aA", "alice")}},
		{"a namespace without rules", "other",
			`{"documents":[{"_id":"a","user_id":"alice"}]}`, nil},
	}, (*Rules).UpsertDocumentsREST)
}

func TestUpdateDocumentsREST(t *testing.T) {
	runDocCases(t, []docCase{
		{"per id: sets the subject, moves the record", "__default__",
			`{"documents":[{"_id":"a","user_id":"carol","title":"t"},{"_id":"b","title":"only a title"}]}`,
			[]extract.Tag{docTag("__default__", extract.OpWrite, "a", "carol")}},
		{"per id: removes the subject field", "__default__",
			`{"documents":[{"_id":"a","_remove_fields":["title","user_id"]}]}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a"}}},
		{"per id: removes another field", "__default__",
			`{"documents":[{"_id":"a","_remove_fields":["title"]}]}`, nil},
		{"by filter setting a subject field: unattributed", "__default__",
			`{"filter":{"user_id":{"$eq":"alice"}},"set_fields":{"user_id":"bob"}}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpUnattributed,
				Reason: `a documents update by filter sets or removes a subject field (one of ["user_id"]), so which documents it moves is known only to Pinecone; update by "_id" instead`}}},
		{"by filter removing a subject field: unattributed", "team",
			`{"filter":{"owner":"alice"},"remove_fields":["members"]}`,
			[]extract.Tag{{Table: "docs/team", Op: extract.OpUnattributed,
				Reason: `a documents update by filter sets or removes a subject field (one of ["owner" "members"]), so which documents it moves is known only to Pinecone; update by "_id" instead`}}},
		{"by filter setting other fields", "__default__",
			`{"filter":{"user_id":"alice"},"set_fields":{"reviewed":true}}`, nil},
		{"per id with an empty set_fields beside it", "__default__",
			`{"documents":[{"_id":"a","user_id":"carol"}],"set_fields":{},"remove_fields":[]}`,
			[]extract.Tag{docTag("__default__", extract.OpWrite, "a", "carol")}},
	}, (*Rules).UpdateDocumentsREST)
}

func TestDeleteDocumentsREST(t *testing.T) {
	runDocCases(t, []docCase{
		{"by ids", "team", `{"ids":["a","b"]}`,
			[]extract.Tag{docTag("team", extract.OpDelete, "a"), docTag("team", extract.OpDelete, "b")}},
		{"by filter marks the namespace for settling", "team", `{"filter":{"owner":"alice"}}`, []extract.Tag{{Table: "docs/team", Op: extract.OpDeleteByFilter}}},
		{"a filter that is not an object yields nothing", "team", `{"filter":null}`, nil},
		{"delete_all marks the namespace", "team", `{"delete_all":true}`, []extract.Tag{{Table: "docs/team", Op: extract.OpDeleteAll}}},
		{"delete_all false yields nothing", "team", `{"delete_all":false}`, nil},
	}, (*Rules).DeleteDocumentsREST)
}

// Every hostile shape the vectors API refuses is refused in documents
// writes too; the error names the place, never a value.
func TestDocumentsREST_Refusals(t *testing.T) {
	upsert, update, del := (*Rules).UpsertDocumentsREST, (*Rules).UpdateDocumentsREST, (*Rules).DeleteDocumentsREST
	for _, tc := range []struct {
		name string
		fn   func(*Rules, string, []byte) ([]extract.Tag, error)
		ns   string
		body string
		want string
	}{
		{"not JSON", upsert, "", `{"documents":[`, "not a valid JSON object"},
		{"not an object", upsert, "", `[]`, "not a valid JSON object"},
		{"no documents", upsert, "", `{}`, `no "documents" array`},
		{"document not an object", upsert, "", `{"documents":["x"]}`, "documents[0] is not an object"},
		{"no _id", upsert, "", `{"documents":[{"user_id":"secret-alice"}]}`, `documents[0] has no non-empty string "_id"`},
		{"empty _id", upsert, "", `{"documents":[{"_id":""}]}`, `has no non-empty string "_id"`},
		{"documents twice", upsert, "", `{"documents":[],"documents":[{"_id":"a","user_id":"x"}]}`, `"documents" appears more than once`},
		{"_id twice, one escaped", upsert, "", `{"documents":[{"_id":"a","\u005fid":"b"}]}`, `documents[0]."_id" appears more than once`},
		{"subject field twice, one escaped", upsert, "", `{"documents":[{"_id":"a","user_id":"x","user\u005fid":"y"}]}`, `subject field "user_id" appears more than once`},
		{"number written beyond float64", upsert, "", `{"documents":[{"_id":"a","user_id":1e400}]}`, `subject field "user_id"`},
		{"number not exactly a float64", upsert, "", `{"documents":[{"_id":"a","user_id":12345678901234567890}]}`, `subject field "user_id"`},
		{"non-UTF-8 subject", upsert, "", "{\"documents\":[{\"_id\":\"a\",\"user_id\":\"\xff\"}]}", "not valid UTF-8"},
		{"lone surrogate subject", upsert, "", `{"documents":[{"_id":"a","user_id":"\ud800"}]}`, "not valid UTF-8"},
		{"lone surrogate id", del, "", `{"ids":["\udc00"]}`, "ids[0] is not valid UTF-8"},
		{"non-UTF-8 path namespace", upsert, "\xff", `{"documents":[]}`, "the path's namespace is not valid UTF-8"},
		{"update: both forms", update, "", `{"documents":[{"_id":"a"}],"filter":{"x":1}}`, "mutually exclusive"},
		{"update: filter twice", update, "", `{"filter":{"a":1},"filter":{"b":1},"set_fields":{"user_id":"x"}}`, `"filter" appears more than once`},
		{"update: remove_fields not strings", update, "", `{"filter":{"a":1},"remove_fields":[1]}`, "remove_fields[0] is not a string"},
		{"update: _remove_fields twice", update, "", `{"documents":[{"_id":"a","_remove_fields":[],"_remove_fields":["user_id"]}]}`, `"_remove_fields" appears more than once`},
		{"update: set_fields not an object", update, "", `{"filter":{"a":1},"set_fields":[]}`, `"set_fields" is not an object`},
		{"delete: ids twice", del, "", `{"ids":["a"],"ids":["b"]}`, `"ids" appears more than once`},
		{"delete: id not a string", del, "", `{"ids":[1]}`, "ids[0] is not a non-empty string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.fn(pcRules(t), tc.ns, []byte(tc.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "secret-alice")
		})
	}
}
