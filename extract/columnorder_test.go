package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderCatalog is itemsCatalog with public.docs, whose subject column is
// not next to its id, and a partition of items whose columns are in
// another order than its parent's (created apart, then attached).
func orderCatalog() []Relation {
	return append(itemsCatalog(),
		Relation{OID: 40, Schema: "public", Name: "docs", Kind: 'r', Columns: []string{"id", "body", "user_id", "cmetadata", "embedding"}},
		Relation{OID: 14, Schema: "public", Name: "items_2025", Kind: 'r', Columns: []string{"body", "user_id", "id"}, Parents: []uint32{10}, Partition: true},
	)
}

func orderRules(t testing.TB) *Rules {
	t.Helper()
	return testRules(t).WithWriters(testRules(t).FindWriters(Catalog{Relations: orderCatalog()}))
}

func TestInsert_WithoutColumnListFollowsTheCatalogsColumnOrder(t *testing.T) {
	r := orderRules(t)
	const docs, items = "public.docs", "public.items"
	cases := []struct {
		name string
		sql  string
		p    Params
		want []Tag
	}{
		{"literals", `INSERT INTO docs VALUES ('d1', 'text', 'alice', '{"user_id": "bob"}', '[1,2,3]')`, Params{},
			[]Tag{write(docs, "d1", "alice", "bob")}},
		{"params", `INSERT INTO docs VALUES ($1, $2, $3, $4, $5)`, textParams("d1", "text", "alice", `{}`, "[1,2,3]"),
			[]Tag{write(docs, "d1", "alice")}},
		{"multi-row", `INSERT INTO docs VALUES ('a', 'x', 'u1', NULL, NULL), ('b', 'y', 'u2', NULL, NULL)`, Params{},
			[]Tag{write(docs, "a", "u1"), write(docs, "b", "u2")}},
		{"DEFAULT id", `INSERT INTO docs VALUES (DEFAULT, 'x', 'u1')`, Params{},
			[]Tag{write(docs, "", "u1")}},
		{"DEFAULT subject takes the column default, as with a column list", `INSERT INTO docs VALUES ('a', 'x', DEFAULT)`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"fewer values than columns: the rest take defaults", `INSERT INTO docs VALUES ('a', 'x', 'u1')`, Params{},
			[]Tag{write(docs, "a", "u1")}},
		{"fewer values than the subject's position", `INSERT INTO docs VALUES ('a', 'x')`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"SELECT of plain values", `INSERT INTO docs SELECT 'a', 'x', $1::text`, textParams("u1"),
			[]Tag{write(docs, "a", "u1")}},
		{"ON CONFLICT DO UPDATE from EXCLUDED", `INSERT INTO docs VALUES ('a', 'x', 'u1') ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id`, Params{},
			[]Tag{write(docs, "a", "u1")}},
		{"a view has its own order", `INSERT INTO items_v VALUES ('a', 'ann')`, Params{},
			[]Tag{write(items, "a", "ann")}},
		{"a view over a view", `INSERT INTO items_vv VALUES ('a', 'ann')`, Params{},
			[]Tag{write(items, "a", "ann")}},
		{"a partition has its own order", `INSERT INTO items_2025 VALUES ('text', 'ann', 'a')`, Params{},
			[]Tag{write(items, "a", "ann")}},
		{"a partitioned table", `INSERT INTO items VALUES ('a', 'ann', 'text')`, Params{},
			[]Tag{write(items, "a", "ann")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, tagsOf(t, r, c.sql, c.p))
		})
	}
}

func TestInsert_WithoutColumnListRefusedWhenTheOrderIsNotKnown(t *testing.T) {
	cases := []struct {
		name  string
		r     *Rules
		sql   string
		wants []string
	}{
		{"no catalog read", testRules(t), `INSERT INTO docs VALUES ('a', 'x', 'u')`,
			[]string{"does not know its column order", "name the columns", "capture.store"}},
		{"a table the last read did not see", orderRules(t), `INSERT INTO mem0 VALUES ('a', '{}')`,
			[]string{"does not know its column order", "name the columns"}},
		{"more values than known columns", orderRules(t), `INSERT INTO docs VALUES ('a', 'x', 'u', NULL, NULL, 'new')`,
			[]string{"has 6 values", "had 5 columns", "name the columns"}},
		{"rows of different lengths", orderRules(t), `INSERT INTO docs VALUES ('a', 'x', 'u'), ('b', 'y')`,
			[]string{"row 2"}},
		{"INSERT … SELECT from a table keeps today's refusal", orderRules(t), `INSERT INTO docs SELECT * FROM staging`,
			[]string{"INSERT … SELECT"}},
		{"INSERT … SELECT of a function may yield several rows", orderRules(t), `INSERT INTO docs SELECT generate_series(1, 3)::text, 'x', 'u'`,
			[]string{"INSERT … SELECT"}},
		{"a subject from an expression", orderRules(t), `INSERT INTO docs VALUES ('a', 'x', lower($1))`,
			[]string{"expression"}},
		{"after DDL that may reorder it", orderRules(t).WithPendingColumnOrder([]string{"public.docs"}), `INSERT INTO docs VALUES ('a', 'x', 'u')`,
			[]string{"column order of public.docs", "name the columns"}},
		{"after DDL, through a relation that writes it", orderRules(t).WithPendingColumnOrder([]string{"public.items"}), `INSERT INTO items_v VALUES ('a', 'ann')`,
			[]string{"column order of public.items"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags := tagsOf(t, c.r, c.sql, textParams("u"))
			require.Len(t, tags, 1)
			assert.Equal(t, OpUnattributed, tags[0].Op)
			for _, w := range c.wants {
				assert.Contains(t, tags[0].Reason, w)
			}
		})
	}
}

func TestInsert_PendingColumnOrderLeavesColumnListsAlone(t *testing.T) {
	r := orderRules(t).WithPendingColumnOrder([]string{"public.docs"})
	assert.Equal(t, []Tag{write("public.docs", "a", "u")}, tagsOf(t, r, `INSERT INTO docs (id, user_id) VALUES ('a', 'u')`, Params{}))
	assert.Equal(t, []Tag{write("public.items", "a", "ann")}, tagsOf(t, r, `INSERT INTO items VALUES ('a', 'ann')`, Params{}))
}

func TestInsert_SelectOfPlainValuesIsOneRow(t *testing.T) {
	r := testRules(t)
	assert.Equal(t, []Tag{write("public.docs", "a", "u")}, tagsOf(t, r, `INSERT INTO docs (id, user_id) SELECT 'a', 'u'`, Params{}))
	for _, sql := range []string{
		`INSERT INTO docs (id, user_id) SELECT 'a', 'u' WHERE false`,
		`INSERT INTO docs (id, user_id) SELECT 'a', 'u' FROM generate_series(1, 2)`,
		`INSERT INTO docs (id, user_id) SELECT 'a', 'u' LIMIT 0`,
		`INSERT INTO docs (id, user_id) SELECT DISTINCT 'a', 'u'`,
		`INSERT INTO docs (id, user_id) SELECT gen_random_uuid(), 'u'`,
	} {
		tags := tagsOf(t, r, sql, Params{})
		require.Len(t, tags, 1, sql)
		assert.Equal(t, OpUnattributed, tags[0].Op, sql)
	}
}

func TestClassifyDDL_ColumnOrderChanges(t *testing.T) {
	r := orderRules(t)
	bothDocs := []string{"public.docs", "vecs.docs"} // an unqualified name may be either
	tests := []struct {
		sql       string
		ok        bool
		reordered []string
	}{
		{`ALTER TABLE docs ADD COLUMN note text`, true, bothDocs},
		{`ALTER TABLE public.docs DROP COLUMN body`, true, []string{"public.docs"}},
		{`ALTER TABLE items_2025 DROP COLUMN body`, true, []string{"public.items"}},
		{`DROP TABLE docs`, true, bothDocs},
		{`DROP TABLE IF EXISTS other, public.docs CASCADE`, true, []string{"public.docs"}},
		{`DROP VIEW items_v`, true, []string{"public.items"}},
		{`CREATE TABLE docs (user_id text, id text)`, true, bothDocs},
		{`BEGIN; DROP TABLE docs; CREATE TABLE docs (user_id text, id text); COMMIT`, true, bothDocs},
		{`ALTER TABLE archive.docs ADD COLUMN note text`, true, nil},
		{`ALTER TABLE other ADD COLUMN note text`, true, nil},
		{`ALTER TABLE docs ALTER COLUMN body SET NOT NULL`, false, nil},
		{`DROP TABLE other`, false, nil},
		{`DROP INDEX docs`, false, nil},
	}
	for _, tc := range tests {
		got, ok := r.ClassifyDDL(tc.sql)
		assert.Equal(t, tc.ok, ok, tc.sql)
		assert.Equal(t, tc.reordered, got.Reordered, tc.sql)
	}
}

func TestWriters_EqualSeesAChangedColumnOrder(t *testing.T) {
	r := testRules(t)
	before := r.FindWriters(Catalog{Relations: orderCatalog()})
	c := orderCatalog()
	c[len(c)-2].Columns = []string{"id", "user_id", "cmetadata", "embedding"} // docs.body dropped
	after := r.FindWriters(Catalog{Relations: c})
	assert.True(t, before.Equal(r.FindWriters(Catalog{Relations: orderCatalog()})))
	assert.False(t, before.Equal(after), "a refresh must put the new order in force")
	assert.Equal(t, []string{"id", "user_id", "cmetadata", "embedding"}, after.ColumnOrders["public.docs"])
	assert.Equal(t, []string{"id", "owner"}, after.ColumnOrders["public.items_v"])
	assert.NotContains(t, after.ColumnOrders, "public.other", "only configured tables and their relations")
}
