package pgstore

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/extract"
)

// CoverageTables reads, from the catalog alone (no row of any table is
// read, so a role without SELECT on the tables can run it), the tables
// the coverage check judges (see coverageTables).
func (s *Store) CoverageTables(ctx context.Context, skip []string) ([]coverage.Table, error) {
	_, rels, err := s.read(ctx, false)
	if err != nil {
		return nil, err
	}
	return coverageTables(rels, skip), nil
}

// WritersAndCoverage is Writers and CoverageTables from one read of the
// catalog, in one snapshot: what the proxy's periodic catalog refresh
// needs.
func (s *Store) WritersAndCoverage(ctx context.Context, f *extract.WriterFinder, skip []string) (extract.Writers, []coverage.Table, error) {
	c, rels, err := s.read(ctx, true)
	if err != nil {
		return extract.Writers{}, nil, err
	}
	return f.Find(c), coverageTables(rels, skip), nil
}

// coverageTables are the tables and partitioned tables of rels outside
// extensions, temporary schemas and the schemas in skip (the ledger's,
// when it shares the database), by schema and name: their live columns
// with their type names, their parents ("schema.name", from pg_inherits:
// partitions and inheritance children) and their one-column primary key.
// Views are not tables: writes through them reach a table this lists.
func coverageTables(rels []relation, skip []string) []coverage.Table {
	names := make(map[uint32]string, len(rels))
	for _, r := range rels {
		names[r.OID] = r.Schema + "." + r.Name
	}
	var out []coverage.Table
	for _, r := range rels {
		if (r.Kind != 'r' && r.Kind != 'p') || r.extension || strings.HasPrefix(r.Schema, "pg_temp_") || slices.Contains(skip, r.Schema) {
			continue
		}
		t := coverage.Table{Schema: r.Schema, Name: r.Name}
		for i, name := range r.Columns {
			t.Columns = append(t.Columns, coverage.Column{Name: name, Type: r.types[i], PrimaryKey: name == r.primaryKey})
		}
		for _, p := range r.Parents {
			t.Parents = append(t.Parents, names[p])
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b coverage.Table) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Name, b.Name))
	})
	return out
}
