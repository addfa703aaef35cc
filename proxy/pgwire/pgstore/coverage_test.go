package pgstore

import (
	"reflect"
	"testing"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/extract"
)

// The coverage check's tables come from the same read of the catalog as
// the writers: tables and partitioned tables only, not an extension's, a
// temporary schema's or a skipped schema's; parents named, primary key
// marked, sorted by schema and name.
func TestCoverageTables_FromTheRelationsRead(t *testing.T) {
	rel := func(oid uint32, schema, name string, kind byte, cols, types []string, pk string, parents ...uint32) relation {
		return relation{Relation: extract.Relation{OID: oid, Schema: schema, Name: name, Kind: kind, Columns: cols, Parents: parents},
			types: types, primaryKey: pk}
	}
	ext := rel(7, "public", "spatial_ref_sys", 'r', []string{"srid"}, []string{"int4"}, "srid")
	ext.extension = true
	rels := []relation{
		rel(3, "public", "docs_2026", 'r', []string{"id", "embedding"}, []string{"int8", "vector"}, "", 2),
		rel(2, "public", "docs", 'p', []string{"id", "embedding"}, []string{"int8", "vector"}, "id"),
		rel(4, "public", "docs_view", 'v', []string{"id"}, []string{"int8"}, ""),
		rel(5, "public", "remote", 'f', []string{"id"}, []string{"int8"}, ""),
		rel(6, "pg_temp_3", "scratch", 'r', []string{"embedding"}, []string{"vector"}, ""),
		rel(8, "lethe", "tags", 'r', []string{"id"}, []string{"int8"}, "id"),
		rel(9, "app", "notes", 'r', []string{"body"}, []string{"text"}, ""),
		ext,
	}
	got := coverageTables(rels, []string{"lethe"})
	want := []coverage.Table{
		{Schema: "app", Name: "notes", Columns: []coverage.Column{{Name: "body", Type: "text"}}},
		{Schema: "public", Name: "docs", Columns: []coverage.Column{{Name: "id", Type: "int8", PrimaryKey: true}, {Name: "embedding", Type: "vector"}}},
		{Schema: "public", Name: "docs_2026", Columns: []coverage.Column{{Name: "id", Type: "int8"}, {Name: "embedding", Type: "vector"}},
			Parents: []string{"public.docs"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}
