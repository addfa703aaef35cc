package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyDDL(t *testing.T) {
	r := testRules(t).WithWriters(testRules(t).FindWriters(Catalog{
		Relations: itemsCatalog(),
		Routines:  []Routine{sqlRoutine("public", "add_item", `INSERT INTO items (id, user_id) VALUES ($1, $2)`)},
	}))
	tests := []struct {
		sql    string
		ok     bool
		tables []string
	}{
		{`ALTER TABLE items RENAME TO items2`, true, []string{"public.items"}},
		{`ALTER TABLE items RENAME COLUMN user_id TO owner_id`, true, []string{"public.items"}},
		{`ALTER TABLE items_v RENAME TO v2`, true, []string{"public.items"}},
		{`ALTER TABLE unrelated RENAME TO other2`, true, nil},
		{`ALTER SCHEMA vecs RENAME TO vecs2`, true, []string{"vecs.docs"}},
		{`ALTER TABLE items SET SCHEMA archive`, true, []string{"public.items"}},
		{`CREATE TABLE child () INHERITS (items)`, true, []string{"public.items"}},
		{`CREATE TABLE items_2030 PARTITION OF items FOR VALUES IN ('x')`, true, []string{"public.items"}},
		{`CREATE TABLE plain (id int)`, true, nil},
		{`CREATE TABLE notes (id int, user_id text, LIKE items)`, true, nil},
		{`CREATE TABLE IF NOT EXISTS copy AS SELECT * FROM items`, true, nil},
		{`CREATE TEMP TABLE scratch (id int)`, false, nil},
		{`CREATE TABLE pg_temp.scratch (id int)`, false, nil},
		{`CREATE TEMP TABLE scratch AS SELECT 1`, false, nil},
		{`CREATE MATERIALIZED VIEW mv AS SELECT * FROM other`, false, nil},
		{`CREATE INDEX ON items (user_id)`, false, nil},
		{`ALTER TABLE items ADD COLUMN note text`, true, nil},
		{`ALTER TABLE other ADD COLUMN embedding vector(3), ADD COLUMN user_id text`, true, nil},
		{`ALTER TABLE items ALTER COLUMN note SET NOT NULL`, false, nil},
		{`ALTER TABLE items DISABLE TRIGGER ALL`, true, []string{"public.items"}},
		{`CREATE VIEW v AS SELECT * FROM items`, true, []string{"public.items"}},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $$ INSERT INTO items (id, user_id) VALUES ('a', 'b') $$`, true, []string{"public.items"}},
		{`CREATE RULE r AS ON INSERT TO other DO ALSO INSERT INTO items_2024 (id, user_id) VALUES (new.id, 'x')`, true, []string{"public.items"}},
		{`DROP VIEW items_v`, true, nil}, // its column order (TestClassifyDDL_ColumnOrderChanges)
		{`DROP TABLE other`, false, nil},
		{`CREATE VIEW public.report AS SELECT count(*) FROM other`, true, nil},
		{`CREATE FUNCTION public.count_items() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM items $$`, true, nil},
		{`CREATE FUNCTION wrap() RETURNS void LANGUAGE sql AS $$ SELECT add_item('a', 'b') $$`, true, []string{"public.items"}},
		{`SELECT 1; ALTER TABLE items RENAME TO items2`, true, []string{"public.items"}},
		{`INSERT INTO items (id, user_id) VALUES ('I do; you do', 'b'); ALTER VIEW items_v RENAME TO v2; DO $$ BEGIN PERFORM 1; END $$`, true, []string{"public.items"}},
		{`INSERT INTO items (id, user_id) VALUES ('create; alter; do', 'b')`, false, nil},
		{`SELECT 1; CREATE TABLE broken (`, false, nil},
		{`SELECT 'create'`, false, nil},
		{`INSERT INTO items (id, user_id) VALUES ('a', 'b')`, false, nil},
	}
	for _, tc := range tests {
		got, ok := r.ClassifyDDL(tc.sql)
		assert.Equal(t, tc.ok, ok, tc.sql)
		assert.Equal(t, tc.tables, got.Tables, tc.sql)
	}
}

func TestWithPendingDDL_RefusesWritesUntilTheCatalogIsRead(t *testing.T) {
	r := testRules(t).WithPendingDDL([]string{"public.items"})
	for _, sql := range []string{
		`INSERT INTO items2 (id, user_id) VALUES ('a', 'b')`,
		`UPDATE somewhere SET x = 1`,
		`COPY child (id, user_id) FROM STDIN`,
		`SELECT add_item('a', 'b')`,
		`CALL p()`,
		`EXECUTE stmt`,
	} {
		require.True(t, r.Mentions(sql), sql)
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err, sql)
		require.Len(t, as, 1, sql)
		assert.Equal(t, KindUnattributed, as[0].Kind, sql)
		assert.Equal(t, "public.items", as[0].Table, sql)
		assert.Contains(t, as[0].Reason, "commit the DDL, then write", sql)
	}
	for _, sql := range []string{`SELECT id FROM items2`, `SHOW search_path`, `ALTER TABLE items2 RENAME TO items`} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err, sql)
		assert.Empty(t, as, sql)
	}
}
