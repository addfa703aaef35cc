package coverage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func subjectLike(name string) bool {
	return name == "user_id" || name == "customer_id" || strings.HasSuffix(name, "_email")
}

func table(name string, cols ...string) Table {
	schema, rel, _ := strings.Cut(name, ".")
	t := Table{Schema: schema, Name: rel}
	for _, c := range cols {
		n, typ, _ := strings.Cut(c, " ")
		t.Columns = append(t.Columns, Column{Name: n, Type: typ, PrimaryKey: n == "id"})
	}
	return t
}

func child(t Table, parent string) Table {
	t.Parents = []string{parent}
	return t
}

func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Severity)+" "+f.Code+" "+subject(f))
	}
	return out
}

func TestCheckTables(t *testing.T) {
	docsRule := TableRule{Table: "public.docs", Where: "lethe.yaml:7", Columns: []RuleColumn{{"id", "id"}, {"user_id", "subjects"}}}
	tests := []struct {
		name   string
		policy Policy
		tables []Table
		want   []string
	}{
		{"a vector table without a rule", Policy{},
			[]Table{table("public.notes", "id text", "embedding vector")},
			[]string{"error uncovered_table public.notes"}},
		{"halfvec and sparsevec count as vectors", Policy{},
			[]Table{table("app.a", "id int", "e halfvec"), table("app.b", "id int", "e sparsevec")},
			[]string{"error uncovered_table app.a", "error uncovered_table app.b"}},
		{"a table with a subject-like column and no vector", Policy{},
			[]Table{table("public.orders", "id int", "customer_id text")},
			[]string{"error uncovered_table public.orders"}},
		{"a table with neither", Policy{},
			[]Table{table("public.settings", "key text", "value text")},
			nil},
		{"a rule covers its table", Policy{Tables: []TableRule{docsRule}},
			[]Table{table("public.docs", "id text", "user_id text", "embedding vector")},
			nil},
		{"an ignore covers its table", Policy{Ignore: []Ignore{{Table: "public.help", Reason: "public docs"}}},
			[]Table{table("public.help", "id text", "embedding vector")},
			nil},
		{"a partition of a configured table is covered by its rule", Policy{Tables: []TableRule{docsRule}},
			[]Table{table("public.docs", "id text", "user_id text", "embedding vector"),
				child(table("public.docs_2026", "id text", "user_id text", "embedding vector"), "public.docs")},
			nil},
		{"an uncovered partitioned table is reported once, at its root", Policy{},
			[]Table{table("public.events", "id text"),
				child(table("public.events_1", "id text", "embedding vector"), "public.events"),
				child(table("public.events_2", "id text", "embedding vector"), "public.events")},
			[]string{"error uncovered_table public.events"}},
		{"a rule whose table does not exist is a warning", Policy{Tables: []TableRule{docsRule}},
			nil,
			[]string{"warning missing_table public.docs"}},
		{"an ignore whose table does not exist is a warning", Policy{Ignore: []Ignore{{Table: "public.gone", Reason: "x"}}},
			nil,
			[]string{"warning missing_table public.gone"}},
		{"a rule reading a column the table lacks is an error", Policy{Tables: []TableRule{docsRule}},
			[]Table{table("public.docs", "id text", "owner text", "embedding vector")},
			[]string{"error missing_column public.docs.user_id"}},
		{"the subject column patterns are the policy's", Policy{SubjectColumn: func(string) bool { return false }},
			[]Table{table("public.orders", "id int", "customer_id text")},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.policy.SubjectColumn == nil {
				tc.policy.SubjectColumn = subjectLike
			}
			assert.Equal(t, tc.want, codes(CheckTables(tc.policy, tc.tables)))
		})
	}
}

func TestCheckTables_FindingSaysWhereAndWhatToAdd(t *testing.T) {
	fs := CheckTables(Policy{SubjectColumn: subjectLike}, []Table{table("public.notes", "id text", "user_id text", "embedding vector")})
	require.Len(t, fs, 1)
	f := fs[0]
	assert.Equal(t, "database", f.Where)
	assert.Equal(t, "table public.notes has vector column embedding and column user_id named like a person's id and no rule", f.Message)
	assert.Contains(t, f.Fix, "- {table: public.notes, id: id, subjects: [user_id]}")
	assert.Contains(t, f.Fix, "- {table: public.notes, reason:")

	fs = CheckTables(Policy{Tables: []TableRule{{Table: "public.notes", Where: "lethe.yaml:9", Columns: []RuleColumn{{"uid", "subjects"}}}}},
		[]Table{table("public.notes", "id text", "user_id text", "embedding vector")})
	require.Len(t, fs, 1)
	assert.Equal(t, "lethe.yaml:9", fs[0].Where)
	assert.Contains(t, fs[0].Fix, "id, user_id, embedding")
}

func TestUncovered_IncludesPartitionsAndChildren(t *testing.T) {
	tables := []Table{
		table("public.events", "id text", "embedding vector"),
		child(table("public.events_1", "id text", "embedding vector"), "public.events"),
		child(table("public.events_1a", "id text", "embedding vector"), "public.events_1"),
		table("public.docs", "id text", "embedding vector"),
	}
	p := Policy{Ignore: []Ignore{{Table: "public.docs", Reason: "x"}}}
	assert.Equal(t, map[string]string{
		"public.events": "public.events", "public.events_1": "public.events", "public.events_1a": "public.events",
	}, Uncovered(CheckTables(p, tables), tables))
}

func TestCheckNamespaces(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		want   []string
	}{
		{"a namespace without a rule", Policy{Indexes: []IndexRules{{Index: "docs", Namespaces: []string{"chat"}}}},
			[]string{"error uncovered_namespace docs/__default__", "error uncovered_namespace docs/notes"}},
		{"* covers every namespace", Policy{Indexes: []IndexRules{{Index: "docs", Namespaces: []string{"*"}}}}, nil},
		{"ignores cover namespaces; \"\" is the default one", Policy{
			Indexes: []IndexRules{{Index: "docs", Namespaces: []string{"chat"}}},
			Ignore:  []Ignore{{Index: "docs", Namespace: "notes", Reason: "x"}, {Index: "docs", Namespace: "", Reason: "y"}}}, nil},
		{"an ignore of another index does not", Policy{
			Indexes: []IndexRules{{Index: "docs", Namespaces: []string{"chat"}}},
			Ignore:  []Ignore{{Index: "other", Namespace: "notes", Reason: "x"}, {Index: "docs", Namespace: "__default__", Reason: "y"}}},
			[]string{"error uncovered_namespace docs/notes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, codes(CheckNamespaces(tc.policy, "docs", []string{"notes", "chat", "__default__"})))
		})
	}
}
