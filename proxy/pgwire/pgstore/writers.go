package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/extract"
)

// Writers reads the store's server-side code and returns what of it writes
// the configured tables: functions and procedures (their bodies parsed by
// extract, through f, which remembers the bodies it read before), the
// relations whose triggers or rules do, and the views, partitions and
// inheritance children through which statements write them. Capture refuses (strict) or
// records as unattributed (permissive) the statements that run them.
func (s *Store) Writers(ctx context.Context, f *extract.WriterFinder) (extract.Writers, error) {
	c, err := s.Catalog(ctx)
	if err != nil {
		return extract.Writers{}, err
	}
	return f.Find(c), nil
}

// Catalog reads the functions, procedures, triggers, rules, tables and
// views of the store in one snapshot. It leaves out PostgreSQL's own schemas and
// extensions' functions, which do not write application tables, and C
// functions, whose code cannot be read.
func (s *Store) Catalog(ctx context.Context) (extract.Catalog, error) {
	c, _, err := s.read(ctx, true)
	return c, err
}

// read reads the catalog's relations and, with code, its functions,
// procedures, triggers and rules, in one snapshot; the Catalog it returns
// holds the relations as extract sees them.
func (s *Store) read(ctx context.Context, code bool) (extract.Catalog, []relation, error) {
	var (
		c    extract.Catalog
		rels []relation
	)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if code {
			if c.Routines, err = routines(ctx, tx); err != nil {
				return fmt.Errorf("reading functions: %w", err)
			}
			if c.Triggers, err = triggers(ctx, tx); err != nil {
				return fmt.Errorf("reading triggers: %w", err)
			}
			if c.Rules, err = rewriteRules(ctx, tx); err != nil {
				return fmt.Errorf("reading rules: %w", err)
			}
		}
		if rels, err = relations(ctx, tx); err != nil {
			return fmt.Errorf("reading tables and views: %w", err)
		}
		return nil
	})
	if err != nil {
		return extract.Catalog{}, nil, fmt.Errorf("pgvector store: %w", serverError(err))
	}
	for _, r := range rels {
		c.Relations = append(c.Relations, r.Relation)
	}
	return c, rels, nil
}

// routines reads functions and procedures. PL/pgSQL's parser needs the
// whole CREATE FUNCTION (pg_get_functiondef), and so does a SQL body in
// BEGIN ATOMIC form, whose prosrc is empty.
func routines(ctx context.Context, tx pgx.Tx) ([]extract.Routine, error) {
	rows, err := tx.Query(ctx, `
		SELECT n.nspname, p.proname, l.lanname, p.prosrc,
		       CASE WHEN l.lanname = 'plpgsql' OR (l.lanname = 'sql' AND p.prosrc = '')
		            THEN pg_get_functiondef(p.oid) ELSE '' END
		FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace
		JOIN pg_language l ON l.oid = p.prolang
		WHERE p.prokind IN ('f', 'p')
		  AND l.lanname NOT IN ('c', 'internal')
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
		  AND NOT EXISTS (SELECT 1 FROM pg_depend d
		                  WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`)
	if err != nil {
		return nil, err
	}
	var out []extract.Routine
	var r extract.Routine
	_, err = pgx.ForEachRow(rows, []any{&r.Schema, &r.Name, &r.Language, &r.Source, &r.Definition}, func() error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// Trigger type bits (pg_trigger.tgtype, PostgreSQL's catalog/pg_trigger.h).
const (
	tgInsert   = 1 << 2
	tgDelete   = 1 << 3
	tgUpdate   = 1 << 4
	tgTruncate = 1 << 5
)

// triggers reads enabled user triggers. A trigger on a partition or an
// inheritance child also fires for writes made through its ancestors, so
// it is listed once per ancestor as well.
func triggers(ctx context.Context, tx pgx.Tx) ([]extract.Trigger, error) {
	rows, err := tx.Query(ctx, `
		WITH RECURSIVE fired (trigger, rel) AS (
		    SELECT t.oid, t.tgrelid FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgenabled <> 'D'
		  UNION
		    SELECT f.trigger, i.inhparent FROM fired f JOIN pg_inherits i ON i.inhrelid = f.rel
		)
		SELECT rn.nspname, c.relname, t.tgname, t.tgtype::int, pn.nspname, p.proname
		FROM fired f
		JOIN pg_trigger t ON t.oid = f.trigger
		JOIN pg_class c ON c.oid = f.rel
		JOIN pg_namespace rn ON rn.oid = c.relnamespace
		JOIN pg_proc p ON p.oid = t.tgfoid
		JOIN pg_namespace pn ON pn.oid = p.pronamespace`)
	if err != nil {
		return nil, err
	}
	var out []extract.Trigger
	var tg extract.Trigger
	var typ int
	_, err = pgx.ForEachRow(rows, []any{&tg.Schema, &tg.Table, &tg.Name, &typ, &tg.FunctionSchema, &tg.Function}, func() error {
		tg.Events = 0
		for bit, e := range map[int]extract.Events{tgInsert: extract.OnInsert, tgDelete: extract.OnDelete, tgUpdate: extract.OnUpdate, tgTruncate: extract.OnTruncate} {
			if typ&bit != 0 {
				tg.Events |= e
			}
		}
		out = append(out, tg)
		return nil
	})
	return out, err
}

// rewriteRules reads enabled rules other than views' _RETURN.
func rewriteRules(ctx context.Context, tx pgx.Tx) ([]extract.RewriteRule, error) {
	rows, err := tx.Query(ctx, `
		SELECT n.nspname, c.relname, r.rulename, r.ev_type::text, pg_get_ruledef(r.oid)
		FROM pg_rewrite r
		JOIN pg_class c ON c.oid = r.ev_class
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE r.rulename <> '_RETURN' AND r.ev_enabled <> 'D'
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		return nil, err
	}
	var out []extract.RewriteRule
	var rr extract.RewriteRule
	var ev string
	_, err = pgx.ForEachRow(rows, []any{&rr.Schema, &rr.Table, &rr.Name, &ev, &rr.Definition}, func() error {
		// pg_rewrite.ev_type: '2' UPDATE, '3' INSERT, '4' DELETE.
		rr.Event = map[string]extract.Events{"2": extract.OnUpdate, "3": extract.OnInsert, "4": extract.OnDelete}[ev]
		out = append(out, rr)
		return nil
	})
	return out, err
}
