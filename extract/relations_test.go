package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// analysedTables lists the tables of analyses, in order.
func analysedTables(as []*Analysis) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Table)
	}
	return out
}

// itemsCatalog is public.items (configured: id, user_id) with a
// partition tree, an inheritance child, views over it and an unrelated
// table, as the connector reads them.
func itemsCatalog() []Relation {
	return []Relation{
		{OID: 10, Schema: "public", Name: "items", Kind: 'p', Columns: []string{"id", "user_id", "body"}},
		{OID: 11, Schema: "public", Name: "items_2024", Kind: 'p', Columns: []string{"id", "user_id", "body"}, Parents: []uint32{10}, Partition: true},
		{OID: 12, Schema: "archive", Name: "items_2024_q1", Kind: 'r', Columns: []string{"id", "user_id", "body"}, Parents: []uint32{11}, Partition: true},
		{OID: 13, Schema: "public", Name: "items_extra", Kind: 'r', Columns: []string{"id", "user_id", "body", "extra"}, Parents: []uint32{10}},
		{OID: 20, Schema: "public", Name: "items_v", Kind: 'v', Columns: []string{"id", "owner"}, ViewUpdatable: true, ViewBases: []uint32{10},
			ViewDefinition: " SELECT items.id,\n    items.user_id AS owner\n   FROM items\n  WHERE items.body IS NOT NULL;"},
		{OID: 21, Schema: "public", Name: "items_vv", Kind: 'v', Columns: []string{"key", "who"}, ViewUpdatable: true, ViewBases: []uint32{20},
			ViewDefinition: " SELECT items_v.id AS key,\n    items_v.owner AS who\n   FROM items_v;"},
		{OID: 22, Schema: "public", Name: "items_upper", Kind: 'v', Columns: []string{"id", "user_id"}, ViewUpdatable: true, ViewBases: []uint32{10},
			ViewDefinition: " SELECT items.id,\n    upper(items.user_id) AS user_id\n   FROM items;"},
		{OID: 23, Schema: "public", Name: "items_join", Kind: 'v', Columns: []string{"id", "user_id"}, ViewUpdatable: true, ViewBases: []uint32{10, 30},
			ViewDefinition: " SELECT i.id,\n    i.user_id\n   FROM (items i\n     JOIN other o ON ((o.id = i.id)));"},
		{OID: 24, Schema: "public", Name: "items_report", Kind: 'v', Columns: []string{"n"}, ViewBases: []uint32{10},
			ViewDefinition: " SELECT count(*) AS n\n   FROM items;"},
		{OID: 25, Schema: "pg_temp_3", Name: "tmp_items", Kind: 'v', Columns: []string{"id", "user_id"}, ViewUpdatable: true, ViewBases: []uint32{10},
			ViewDefinition: " SELECT items.id,\n    items.user_id\n   FROM items;"},
		{OID: 30, Schema: "public", Name: "other", Kind: 'r', Columns: []string{"id"}},
	}
}

func itemsRules(t *testing.T, wf *WriterFinder, c []Relation) *Rules {
	t.Helper()
	return testRules(t).WithWriters(wf.Find(Catalog{Relations: c}))
}

func TestFindWriters_RelationsThatWriteAConfiguredTable(t *testing.T) {
	w := testRules(t).FindWriters(Catalog{Relations: itemsCatalog()})
	got := map[string]DerivedRelation{}
	for _, d := range w.Relations {
		got[d.Schema+"."+d.Name] = d
	}
	assert.Equal(t, DerivedRelation{Schema: "public", Name: "items_2024", Of: "public.items", How: "partition",
		Columns: map[string]string{"id": "id", "user_id": "user_id"}}, got["public.items_2024"])
	assert.Equal(t, "partition", got["archive.items_2024_q1"].How, "a partition of a partition")
	assert.Equal(t, "inheritance child", got["public.items_extra"].How)
	assert.Equal(t, map[string]string{"id": "id", "user_id": "owner"}, got["public.items_v"].Columns)
	assert.Equal(t, map[string]string{"id": "key", "user_id": "who"}, got["public.items_vv"].Columns, "a view over a view")
	assert.Equal(t, map[string]string{"id": "id"}, got["public.items_upper"].Columns, "an expression is not the column")
	assert.Contains(t, got["public.items_join"].Refuse, "cannot map")
	assert.NotContains(t, got, "public.items_report", "PostgreSQL cannot write through it")
	assert.NotContains(t, got, "public.other")
	assert.Empty(t, got["public.items_v"].Refuse)
}

func TestAnalyze_WritesThroughDerivedRelationsAreTheTables(t *testing.T) {
	r := itemsRules(t, testRules(t).WriterFinder(), itemsCatalog())
	tests := []struct {
		sql      string
		subjects []string
	}{
		{`INSERT INTO items_2024 (id, user_id) VALUES ('a', 'ann')`, []string{"ann"}},
		{`INSERT INTO archive.items_2024_q1 (id, user_id) VALUES ('a', 'ann')`, []string{"ann"}},
		{`INSERT INTO items_extra (id, user_id, extra) VALUES ('a', 'ann', 1)`, []string{"ann"}},
		{`INSERT INTO items_v (id, owner) VALUES ('a', 'ann')`, []string{"ann"}},
		{`INSERT INTO items_vv (key, who) VALUES ('a', 'ann')`, []string{"ann"}},
		{`INSERT INTO items_v (id, user_id) VALUES ('a', 'ann')`, nil}, // no such view column: the server refuses it
		{`UPDATE items_v SET owner = 'bob' WHERE id = 'a'`, []string{"bob"}},
		{`INSERT INTO tmp_items (id, user_id) VALUES ('a', 'ann')`, []string{"ann"}},
		{`INSERT INTO pg_temp.tmp_items (id, user_id) VALUES ('a', 'ann')`, []string{"ann"}},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			as, err := r.Analyze(tc.sql, nil)
			require.NoError(t, err)
			require.Len(t, as, 1)
			require.NotEqual(t, KindUnattributed, as[0].Kind, as[0].Reason)
			tags, err := as[0].Tags(Params{})
			require.NoError(t, err)
			require.Len(t, tags, 1)
			assert.Equal(t, "public.items", tags[0].Table)
			assert.Equal(t, "a", tags[0].ID)
			assert.Equal(t, tc.subjects, tags[0].Subjects)
		})
	}

	as, err := r.Analyze(`COPY items_2024 (id, user_id) FROM STDIN`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	assert.Equal(t, KindCopy, as[0].Kind)
	assert.Equal(t, "public.items", as[0].Table)

	for _, sql := range []string{
		`INSERT INTO items_join (id, user_id) VALUES ('a', 'ann')`,
		`TRUNCATE items_2024`,
		`DO $$ BEGIN INSERT INTO items_extra (id, user_id) SELECT 'a', 'ann'; END $$`,
	} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err)
		require.Len(t, as, 1, sql)
		assert.Equal(t, KindUnattributed, as[0].Kind, sql)
		assert.Equal(t, "public.items", as[0].Table, sql)
	}
	assert.True(t, r.Mentions(`insert into ITEMS_2024 values (1)`))
}

func TestFindWriters_RenamedTableAndColumnsAreRefused(t *testing.T) {
	wf := testRules(t).WriterFinder()
	c := itemsCatalog()
	itemsRules(t, wf, c) // the finder learns which relation items is
	c[0].Name = "items_old"
	r := itemsRules(t, wf, c)
	for _, sql := range []string{
		`INSERT INTO items_old (id, user_id) VALUES ('a', 'ann')`,
		`INSERT INTO items_2024 (id, user_id) VALUES ('a', 'ann')`, // a partition of the renamed table
	} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err)
		require.Len(t, as, 1, sql)
		assert.Equal(t, KindUnattributed, as[0].Kind, sql)
		assert.Contains(t, as[0].Reason, "public.items under a new name", sql)
	}

	c = itemsCatalog()
	c[0].Columns = []string{"id", "owner_id", "body"}
	r = itemsRules(t, testRules(t).WriterFinder(), c)
	as, err := r.Analyze(`INSERT INTO items (id, owner_id) VALUES ('a', 'ann')`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	assert.Equal(t, KindUnattributed, as[0].Kind)
	assert.Contains(t, as[0].Reason, "has no column user_id")
}

func TestAnalyze_AttachAndDetachAreUnattributed(t *testing.T) {
	r := itemsRules(t, testRules(t).WriterFinder(), itemsCatalog())
	for _, sql := range []string{
		`ALTER TABLE items ATTACH PARTITION filled FOR VALUES IN ('x')`,
		`ALTER TABLE public.items DETACH PARTITION items_extra`,
		`ALTER TABLE items_2024 ATTACH PARTITION filled FOR VALUES IN ('x')`,
		`ALTER TABLE filled INHERIT items`,
		`ALTER TABLE items_extra NO INHERIT items`,
	} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err)
		require.Len(t, as, 1, sql)
		assert.Equal(t, KindUnattributed, as[0].Kind, sql)
		assert.Equal(t, "public.items", as[0].Table, sql)
		assert.Contains(t, as[0].Reason, "insert the rows through the proxy", sql)
	}
	for _, sql := range []string{
		`ALTER TABLE other ATTACH PARTITION filled FOR VALUES IN ('x')`,
		`ALTER INDEX items_idx ATTACH PARTITION items_2024_idx`,
		`ALTER TABLE items ADD COLUMN note text`,
	} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err)
		assert.Empty(t, as, sql)
	}
}

func TestFindWriters_FunctionWritingAPartitionWritesTheTable(t *testing.T) {
	w := testRules(t).FindWriters(Catalog{
		Relations: itemsCatalog(),
		Routines:  []Routine{sqlRoutine("public", "add_item", `INSERT INTO items_2024 (id, user_id) VALUES ($1, $2)`)},
	})
	require.Len(t, w.Functions, 1)
	assert.Equal(t, []string{"public.items"}, w.Functions[0].Tables)
}

func TestFindWriters_FunctionsThatChangeSearchPath(t *testing.T) {
	r := testRules(t)
	w := r.FindWriters(Catalog{Routines: []Routine{
		plpgsql("enter_tenant", "void", "BEGIN PERFORM set_config('search_path', 'tenant', false); END"),
		plpgsql("use_schema", "void", "BEGIN EXECUTE 'SET search_path TO ' || quote_ident($1); END"),
		{Schema: "public", Name: "pinned", Language: "plpgsql", Source: "BEGIN RETURN; END",
			Definition: "CREATE FUNCTION public.pinned() RETURNS void LANGUAGE plpgsql SET search_path TO '' AS $$BEGIN RETURN; END$$"},
	}})
	assert.Equal(t, []PathSetter{{"public", "enter_tenant"}, {"public", "use_schema"}}, w.PathSetters,
		"a SET clause in the header restores the path on return")
	r = r.WithWriters(w)
	assert.True(t, r.CallsPathSetter(`SELECT enter_tenant()`))
	assert.True(t, r.CallsPathSetter(`SELECT x FROM t WHERE public.use_schema('a') IS NULL`))
	assert.True(t, r.CallsPathSetter(`CALL enter_tenant()`))
	assert.False(t, r.CallsPathSetter(`SELECT other.enter_tenant()`), "another schema's function")
	assert.False(t, r.CallsPathSetter(`SELECT pinned()`))
	assert.False(t, r.CallsPathSetter(`SELECT 'enter_tenant'`))
}
