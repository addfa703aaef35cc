package pgvector

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// CoverageTables reads, from the catalog alone (no row of any table is
// read, so a role without SELECT on the tables can run it), the tables and
// partitioned tables outside PostgreSQL's own schemas, extensions' tables,
// temporary schemas and the schemas in skip (the ledger's, when it shares
// the database): their live columns with their type names, their parents
// (pg_inherits: partitions and inheritance children) and their one-column
// primary key. Views are not tables: writes through them reach a table
// this lists.
func (s *Store) CoverageTables(ctx context.Context, skip []string) ([]coverage.Table, error) {
	if skip == nil {
		skip = []string{}
	}
	rows, err := s.pool.Query(ctx, `
		SELECT n.nspname, c.relname,
		       ARRAY(SELECT a.attname::text FROM pg_attribute a
		             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
		       ARRAY(SELECT t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
		       ARRAY(SELECT pn.nspname || '.' || p.relname FROM pg_inherits i
		             JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace pn ON pn.oid = p.relnamespace
		             WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
		       COALESCE((SELECT a.attname::text FROM pg_index x
		                 JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
		                 WHERE x.indrelid = c.oid AND x.indisprimary AND x.indnatts = 1), '')
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p')
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
		  AND n.nspname <> ALL($1)
		  AND NOT EXISTS (SELECT 1 FROM pg_depend d
		                  WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
		ORDER BY n.nspname, c.relname`, skip)
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading tables and columns: %w", serverError(err))
	}
	var out []coverage.Table
	var (
		t            coverage.Table
		names, types []string
		pk           string
	)
	_, err = pgx.ForEachRow(rows, []any{&t.Schema, &t.Name, &names, &types, &t.Parents, &pk}, func() error {
		for i, name := range names {
			t.Columns = append(t.Columns, coverage.Column{Name: name, Type: types[i], PrimaryKey: name == pk})
		}
		out = append(out, t)
		t = coverage.Table{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector store: reading tables and columns: %w", serverError(err))
	}
	return out, nil
}
