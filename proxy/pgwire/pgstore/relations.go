package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/extract"
)

// relation is one row of the catalog's relations: what extract needs to
// follow writes through views, partitions and children, and what the
// coverage check needs of tables (coverageTables).
type relation struct {
	extract.Relation
	types      []string // pg_type.typname of Columns, in the same order
	primaryKey string   // the one-column primary key; "" when none
	extension  bool     // a member of an extension (pg_depend deptype 'e')
}

// relations reads the tables, partitioned tables, foreign tables and views
// outside PostgreSQL's own schemas: their columns and column types, their
// one-column primary key, whether an extension owns them, the tables they
// are partitions or inheritance children of, and for views their
// definition, the relations their query reads (the dependencies of the
// view's _RETURN rule) and whether PostgreSQL writes through them without
// triggers (pg_relation_is_updatable: bits 1<<2 UPDATE, 1<<3 INSERT, 1<<4
// DELETE, rules included, INSTEAD OF triggers not). Temporary relations of
// every session are included: a session's temporary view over a configured
// table writes it too. pg_relation_is_updatable opens the relation, so it
// is asked of views only (CASE, not AND, decides what is evaluated).
func relations(ctx context.Context, tx pgx.Tx) ([]relation, error) {
	rows, err := tx.Query(ctx, `
		SELECT c.oid, n.nspname, c.relname, c.relkind::text, c.relispartition,
		       ARRAY(SELECT a.attname::text FROM pg_attribute a
		             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
		       ARRAY(SELECT t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
		       COALESCE((SELECT a.attname::text FROM pg_index x
		                 JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
		                 WHERE x.indrelid = c.oid AND x.indisprimary AND x.indnatts = 1), ''),
		       EXISTS (SELECT 1 FROM pg_depend d
		               WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'),
		       ARRAY(SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
		       CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) ELSE '' END,
		       CASE WHEN c.relkind = 'v' THEN ARRAY(
		           SELECT DISTINCT d.refobjid FROM pg_rewrite r
		           JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
		                           AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> c.oid
		           WHERE r.ev_class = c.oid AND r.rulename = '_RETURN') ELSE '{}' END,
		       CASE WHEN c.relkind = 'v' THEN pg_relation_is_updatable(c.oid, false) & 28 <> 0 ELSE false END
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'f', 'v')
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND n.nspname NOT LIKE 'pg\_toast%'`)
	if err != nil {
		return nil, err
	}
	var out []relation
	var r relation
	var kind string
	_, err = pgx.ForEachRow(rows, []any{&r.OID, &r.Schema, &r.Name, &kind, &r.Partition, &r.Columns, &r.types, &r.primaryKey, &r.extension,
		&r.Parents, &r.ViewDefinition, &r.ViewBases, &r.ViewUpdatable}, func() error {
		r.Kind = kind[0]
		out = append(out, r)
		r = relation{}
		return nil
	})
	return out, err
}
