package pcextract

import (
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

type pbCase struct {
	name string
	any  bool // use pcRulesAny instead of pcRules
	msg  []byte
	want []extract.Tag
}

func runPBCases(t *testing.T, cases []pbCase, fn func(*Rules, []byte) ([]extract.Tag, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := pcRules(t)
			if c.any {
				r = pcRulesAny(t)
			}
			tags, err := fn(r, c.msg)
			require.NoError(t, err)
			assert.Equal(t, c.want, tags)
		})
	}
}

func TestUpsertGRPC(t *testing.T) {
	alice := pbStruct(pbEntry("text", pbValueString("hello")), pbEntry("user_id", pbValueString("alice")))
	def := "docs/__default__"
	runPBCases(t, []pbCase{
		{"absent namespace is the default", false, pbUpsert(pbAbsent, pbVector("a", 8, alice)),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"empty namespace is the default", false, pbUpsert("", pbVector("a", 8, alice)),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"__default__ namespace", false, pbUpsert("__default__", pbVector("a", 8, alice)),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"several vectors, namespace first on the wire", false,
			append(pbString(2, "team"), pbUpsert(pbAbsent,
				pbVector("a", 4, pbStruct(pbEntry("owner", pbValueString("olga")))),
				pbVector("b", 4, pbStruct(pbEntry("members", pbValueList(pbValueString("x"), pbValueString("y"))), pbEntry("owner", pbValueString("olga")))))...),
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"olga"}},
				{Table: "docs/team", Op: extract.OpWrite, ID: "b", Subjects: []string{"olga", "x", "y"}}}},
		{"number subject in its JSON text form", false,
			pbUpsert(pbAbsent, pbVector("a", 4, pbStruct(pbEntry("user_id", pbValueNumber(42)))), pbVector("b", 4, pbStruct(pbEntry("user_id", pbValueNumber(2.5))))),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"42"}}, {Table: def, Op: extract.OpWrite, ID: "b", Subjects: []string{"2.5"}}}},
		{"no metadata, bool, null, struct, nested list: no subjects", false,
			pbUpsert(pbAbsent, pbVector("a", 4, nil),
				pbVector("b", 4, pbStruct(pbEntry("user_id", pbValueBool(true)))),
				pbVector("c", 4, pbStruct(pbEntry("user_id", pbValueNull()))),
				pbVector("d", 4, pbStruct(pbEntry("user_id", pbMsg(5, pbEntry("x", pbValueString("y")))))),
				pbVector("e", 4, pbStruct(pbEntry("user_id", pbValueList(pbValueList(pbValueString("z")), pbValueNumber(3)))))),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a"}, {Table: def, Op: extract.OpWrite, ID: "b"}, {Table: def, Op: extract.OpWrite, ID: "c"},
				{Table: def, Op: extract.OpWrite, ID: "d"}, {Table: def, Op: extract.OpWrite, ID: "e"}}},
		{"a repeated map key that is no subject field is let be", false,
			pbUpsert(pbAbsent, pbVector("a", 4, pbStruct(pbEntry("x", pbValueString("1")), pbEntry("x", pbValueString("2")), pbEntry("user_id", pbValueString("new"))))),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"new"}}}},
		{"unknown fields skipped", false,
			append(pbVarint(9, 1), pbUpsert(pbAbsent, append(pbVector("a", 4, alice), pbVarint(15, 3)...))...),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"uncovered namespace", false, pbUpsert("other", pbVector("a", 4, alice)), nil},
		{"* covers a namespace without its own rule", true, pbUpsert("other", pbVector("a", 4, alice)),
			[]extract.Tag{{Table: "docs/other", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"empty request", false, nil, nil},
	}, (*Rules).UpsertGRPC)
}

func pbUpdate(id string, set []byte, ns string, filter []byte, dryRun bool) []byte {
	var b []byte
	if id != "" {
		b = append(b, pbString(1, id)...)
	}
	b = append(b, pbFloats(2, 4)...)
	if set != nil {
		b = append(b, pbMsg(3, set)...)
	}
	b = append(b, pbNamespace(4, ns)...)
	if filter != nil {
		b = append(b, pbMsg(6, filter)...)
	}
	if dryRun {
		b = append(b, pbVarint(7, 1)...)
	}
	return b
}

func TestUpdateGRPC(t *testing.T) {
	def := "docs/__default__"
	toBob := pbStruct(pbEntry("user_id", pbValueString("bob")), pbEntry("text", pbValueString("x")))
	filter := pbStruct(pbEntry("genre", pbValueString("drama")))
	unattributed := []extract.Tag{{Table: def, Op: extract.OpUnattributed, Reason: pcRules(t).unattributedUpdate("__default__", []string{"user_id"}).Reason}}
	runPBCases(t, []pbCase{
		{"by id, set_metadata moves the record to another subject", false, pbUpdate("a", toBob, pbAbsent, nil, false),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
		{"by id, empty namespace, number subject", false, pbUpdate("a", pbStruct(pbEntry("user_id", pbValueNumber(7))), "", nil, false),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a", Subjects: []string{"7"}}}},
		{"by id, list subject in team", false,
			pbUpdate("a", pbStruct(pbEntry("members", pbValueList(pbValueString("x"), pbValueString("y")))), "team", nil, false),
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"x", "y"}}}},
		{"by id, subject set to a bool", false, pbUpdate("a", pbStruct(pbEntry("user_id", pbValueBool(false))), "__default__", nil, false),
			[]extract.Tag{{Table: def, Op: extract.OpWrite, ID: "a"}}},
		{"by id, no subject field set", false, pbUpdate("a", pbStruct(pbEntry("text", pbValueString("x"))), pbAbsent, nil, false), nil},
		{"by id, values only", false, pbUpdate("a", nil, pbAbsent, nil, false), nil},
		{"by filter setting a subject field", false, pbUpdate("", toBob, pbAbsent, filter, false), unattributed},
		{"by filter setting no subject field", false, pbUpdate("", pbStruct(pbEntry("text", pbValueString("x"))), pbAbsent, filter, false), nil},
		{"dry run", false, pbUpdate("", toBob, pbAbsent, filter, true), nil},
		{"uncovered namespace", false, pbUpdate("a", toBob, "other", nil, false), nil},
		{"* covers", true, pbUpdate("a", toBob, "other", nil, false),
			[]extract.Tag{{Table: "docs/other", Op: extract.OpWrite, ID: "a", Subjects: []string{"bob"}}}},
	}, (*Rules).UpdateGRPC)
}

func pbDelete(ids []string, all bool, ns string, filter []byte) []byte {
	var b []byte
	for _, id := range ids {
		b = append(b, pbString(1, id)...)
	}
	if all {
		b = append(b, pbVarint(2, 1)...)
	}
	b = append(b, pbNamespace(3, ns)...)
	if filter != nil {
		b = append(b, pbMsg(4, filter)...)
	}
	return b
}

func TestDeleteGRPC(t *testing.T) {
	def := "docs/__default__"
	runPBCases(t, []pbCase{
		{"by ids", false, pbDelete([]string{"a", "b"}, false, pbAbsent, nil),
			[]extract.Tag{{Table: def, Op: extract.OpDelete, ID: "a"}, {Table: def, Op: extract.OpDelete, ID: "b"}}},
		{"by ids, empty namespace", false, pbDelete([]string{"a"}, false, "", nil), []extract.Tag{{Table: def, Op: extract.OpDelete, ID: "a"}}},
		{"by ids in team", false, pbDelete([]string{"a"}, false, "team", nil), []extract.Tag{{Table: "docs/team", Op: extract.OpDelete, ID: "a"}}},
		{"delete all marks the namespace", false, pbDelete(nil, true, "team", nil), []extract.Tag{{Table: "docs/team", Op: extract.OpDeleteAll}}},
		{"delete all of an uncovered namespace yields nothing", false, pbDelete(nil, true, "other", nil), nil},
		{"by filter marks the namespace for settling", false, pbDelete(nil, false, pbAbsent, pbStruct(pbEntry("user_id", pbValueString("alice")))),
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpDeleteByFilter}}},
		{"uncovered namespace", false, pbDelete([]string{"a"}, false, "other", nil), nil},
		{"* covers", true, pbDelete([]string{"a"}, false, "other", nil), []extract.Tag{{Table: "docs/other", Op: extract.OpDelete, ID: "a"}}},
	}, (*Rules).DeleteGRPC)
}

func TestPineconeGRPC_MalformedMessagesAreErrorsWithoutValues(t *testing.T) {
	const secret = "s3cret-subject"
	meta := pbStruct(pbEntry("user_id", pbValueString(secret)))
	full := pbUpsert(pbAbsent, pbVector(secret, 4, meta))
	wrongTypeValue := pbStruct(pbEntry("user_id", append(protowire.AppendTag(nil, 3, protowire.VarintType), 1)))
	cases := []struct {
		name string
		fn   func(*Rules, []byte) ([]extract.Tag, error)
		msg  []byte
		says string
	}{
		{"upsert truncated", (*Rules).UpsertGRPC, full[:len(full)-3], "malformed"},
		{"upsert vectors as varint", (*Rules).UpsertGRPC, pbVarint(1, 5), "vectors"},
		{"upsert namespace as varint", (*Rules).UpsertGRPC, pbVarint(2, 5), "namespace"},
		{"upsert vector without id", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, pbVector("a", 1, nil), pbMsg(3, meta)), "vectors[1]: no id"},
		{"upsert id as varint", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, pbVarint(1, 9)), "vectors[0]: id"},
		{"upsert metadata as varint", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, append(pbString(1, secret), pbVarint(3, 9)...)), "vectors[0]: metadata"},
		{"upsert metadata truncated", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, pbVector(secret, 1, meta[:len(meta)-2])), "vectors[0]: metadata"},
		{"upsert value of wrong wire type", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, pbVector(secret, 1, wrongTypeValue)), "vectors[0]: metadata"},
		{"update id as varint", (*Rules).UpdateGRPC, pbVarint(1, 1), "id"},
		{"update dry_run as bytes", (*Rules).UpdateGRPC, pbString(7, secret), "dry_run"},
		{"update set_metadata malformed", (*Rules).UpdateGRPC, pbUpdate(secret, pbStruct(pbEntry("user_id", pbValueString(secret)))[:5], pbAbsent, nil, false), "set_metadata"},
		{"update truncated", (*Rules).UpdateGRPC, pbString(1, secret)[:4], "malformed"},
		{"delete ids as varint", (*Rules).DeleteGRPC, pbVarint(1, 1), "ids"},
		{"delete truncated", (*Rules).DeleteGRPC, pbDelete([]string{secret}, false, pbAbsent, nil)[:5], "malformed"},
		{"bad tag", (*Rules).DeleteGRPC, []byte{0x80}, "malformed"},
		// Repeats of singular fields, which a protobuf parser merges: tags
		// read from one occurrence could miss the subject the store keeps.
		{"upsert metadata twice (merged by a parser)", (*Rules).UpsertGRPC,
			pbUpsert(pbAbsent, append(pbVector(secret, 1, meta), pbMsg(3, pbStruct(pbEntry("x", pbValueString("1"))))...)), "metadata appears more than once"},
		{"upsert id twice", (*Rules).UpsertGRPC, pbUpsert(pbAbsent, append(pbVector(secret, 1, meta), pbString(1, "b")...)), "id appears more than once"},
		{"upsert namespace twice", (*Rules).UpsertGRPC, append(pbUpsert("a", pbVector(secret, 1, meta)), pbString(2, "b")...), "namespace appears more than once"},
		{"subject field twice in a Struct", (*Rules).UpsertGRPC,
			pbUpsert(pbAbsent, pbVector("a", 4, pbStruct(pbEntry("user_id", pbValueString(secret)), pbEntry("user_id", pbValueString("new"))))), "subject field 1 appears more than once"},
		{"map entry with two values", (*Rules).UpsertGRPC,
			pbUpsert(pbAbsent, pbVector("a", 4, pbMsg(1, append(pbString(1, "user_id"), append(pbMsg(2, pbValueString(secret)), pbMsg(2, pbValueString("x"))...)...)))), "value appears more than once"},
		{"Value with two kinds", (*Rules).UpsertGRPC,
			pbUpsert(pbAbsent, pbVector("a", 4, pbStruct(pbEntry("user_id", append(pbValueString(secret), pbValueList(pbValueString("x"))...))))), "more than one kind"},
		{"update set_metadata twice", (*Rules).UpdateGRPC,
			append(pbUpdate("a", pbStruct(pbEntry("x", pbValueString("1"))), pbAbsent, nil, false), pbMsg(3, meta)...), "set_metadata appears more than once"},
		{"delete namespace twice", (*Rules).DeleteGRPC, append(pbDelete([]string{"a"}, false, "a", nil), pbString(3, "b")...), "namespace appears more than once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := c.fn(pcRules(t), c.msg)
			require.Error(t, err)
			assert.Nil(t, tags)
			assert.Contains(t, err.Error(), c.says)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}
