package walfollow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/lethe-privacy/lethe/extract"
)

// insertsOnly names the second publication, of tables with no replica
// identity.
func insertsOnly(name string) string { return name + "_inserts" }

// ErrNotLogical is returned when the server does not write logical WAL.
var ErrNotLogical = errors.New("walfollow: the server's wal_level is not logical")

// CheckServer says what the server lacks for following, in words an
// operator can act on.
func CheckServer(ctx context.Context, conn *pgx.Conn) error {
	var level string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return fmt.Errorf("walfollow: reading wal_level: %w", err)
	}
	if level != "logical" {
		return fmt.Errorf("%w (it is %q). Set wal_level = logical and restart PostgreSQL "+
			"(Amazon RDS/Aurora: rds.logical_replication = 1 in the parameter group; Cloud SQL: the flag cloudsql.logical_decoding = on; "+
			"Azure Database for PostgreSQL: the server parameter wal_level = logical; Supabase: already logical; "+
			"Neon: enable logical replication in the project settings), or set capture.wal: off and accept that writes made around the proxy "+
			"are not tagged (docs/wal.md)", ErrNotLogical, level)
	}
	var user string
	var replicate bool
	if err := conn.QueryRow(ctx, "SELECT current_user, rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&user, &replicate); err != nil {
		return fmt.Errorf("walfollow: reading the role's attributes: %w", err)
	}
	if !replicate {
		return fmt.Errorf("walfollow: role %q (capture.store's user) cannot open a replication connection: run ALTER ROLE %s REPLICATION (docs/wal.md)",
			user, pgx.Identifier{user}.Sanitize())
	}
	return nil
}

// published is one relation as the publications carry it: a configured
// table, or an inheritance child of one.
type published struct {
	table            string // the configured table it belongs to
	schema, relation string
	// only leaves the relation's inheritance children out: each is
	// published on its own, by its own replica identity. (A partitioned
	// table's partitions are published through it.)
	only    bool
	columns []string // the column list; nil publishes every column
	inserts bool     // no replica identity: inserts and truncates only
}

// catalogRelations lists a configured table and its inheritance children
// (not partitions), the table first, with what publishing them needs.
const catalogRelations = `
WITH RECURSIVE rel(oid) AS (
	SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')
	UNION
	SELECT i.inhrelid FROM pg_inherits i JOIN rel ON i.inhparent = rel.oid JOIN pg_class c ON c.oid = i.inhrelid
	WHERE NOT c.relispartition AND c.relkind = 'r')
SELECT n.nspname::text, c.relname::text, c.relkind = 'r', c.relreplident::text,
	array(SELECT attname::text FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped),
	array(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = c.oid AND ((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident)))
FROM rel JOIN pg_class c ON c.oid = rel.oid JOIN pg_namespace n ON n.oid = c.relnamespace
ORDER BY n.nspname = $1 AND c.relname = $2 DESC, 1, 2`

// plan reads the catalog and decides how each configured table that
// exists, and each of its inheritance children, is published. Tables not
// created yet are skipped (the next refresh adds them) and noted as
// "missing"; relations with no replica identity are noted as "inserts"
// (publishing their updates would make the server refuse the
// application's UPDATE and DELETE on them); a rule column the table lacks
// is an error. full names the configured tables published in full: each
// of their relations with a replica identity, so that every insert,
// update, delete and truncate of them is streamed.
func plan(ctx context.Context, conn *pgx.Conn, rules *extract.Rules, note func(table, what string)) (out []published, full []string, err error) {
	for _, t := range rules.StoredTables() {
		rows, err := conn.Query(ctx, catalogRelations, t.Schema(), t.Relation())
		if err != nil {
			return nil, nil, fmt.Errorf("walfollow: reading table %s from the catalog: %w", t.Name(), err)
		}
		var rels []struct {
			published
			ident              string
			columns, idColumns []string
		}
		for rows.Next() {
			var r struct {
				published
				ident              string
				columns, idColumns []string
			}
			if err := rows.Scan(&r.schema, &r.relation, &r.only, &r.ident, &r.columns, &r.idColumns); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("walfollow: reading table %s from the catalog: %w", t.Name(), err)
			}
			rels = append(rels, r)
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("walfollow: reading table %s from the catalog: %w", t.Name(), err)
		}
		if len(rels) == 0 {
			note(t.Name(), "missing")
			continue
		}
		want := append([]string{t.ID()}, t.Columns()...)
		for _, c := range want {
			if !slices.Contains(rels[0].columns, c) {
				return nil, nil, fmt.Errorf("walfollow: table %s has no column %q (check its rule in capture.tables)", t.Name(), c)
			}
		}
		inFull := true
		for _, r := range rels {
			p := r.published
			p.table = t.Name()
			name := r.schema + "." + r.relation
			switch {
			case r.ident == "f":
				// A column list cannot be used with REPLICA IDENTITY FULL.
			case len(r.idColumns) == 0:
				p.inserts, p.columns = true, want
				note(name, "inserts")
			default:
				p.columns = slices.Clone(want)
				for _, c := range r.idColumns {
					if !slices.Contains(p.columns, c) {
						p.columns = append(p.columns, c)
					}
				}
			}
			if !p.inserts {
				note(name, "")
			}
			inFull = inFull && !p.inserts
			out = append(out, p)
		}
		if inFull {
			full = append(full, t.Name())
		}
	}
	return out, full, nil
}

// tableList renders the relations of one publication for SET TABLE.
func tableList(ps []published, inserts bool) string {
	var parts []string
	for _, p := range ps {
		if p.inserts != inserts {
			continue
		}
		s := pgx.Identifier{p.schema, p.relation}.Sanitize()
		if p.only {
			s = "ONLY " + s
		}
		if p.columns != nil {
			cols := make([]string, len(p.columns))
			for i, c := range p.columns {
				cols[i] = pgx.Identifier{c}.Sanitize()
			}
			s += " (" + strings.Join(cols, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// syncPublications makes both publications exist and carry exactly the
// planned tables and columns. joined are the relations it added to one:
// their rows committed before are not in the stream.
func syncPublications(ctx context.Context, conn *pgx.Conn, name string, ps []published) (joined []published, err error) {
	for _, pub := range []struct {
		name    string
		publish string
		inserts bool
	}{{name, "insert, update, delete, truncate", false}, {insertsOnly(name), "insert, truncate", true}} {
		ident := pgx.Identifier{pub.name}.Sanitize()
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", pub.name).Scan(&exists); err != nil {
			return nil, fmt.Errorf("walfollow: reading publication %s: %w", pub.name, err)
		}
		if !exists {
			if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE PUBLICATION %s WITH (publish = '%s', publish_via_partition_root = true)", ident, pub.publish)); err != nil {
				return nil, fmt.Errorf("walfollow: creating publication %s (the role needs CREATE on the database): %w", pub.name, err)
			}
		}
		same, have, current, err := publicationIs(ctx, conn, pub.name, ps, pub.inserts)
		if err != nil {
			return nil, err
		}
		if same {
			continue // ALTER PUBLICATION locks every table: only when something changed
		}
		list := tableList(ps, pub.inserts)
		sql := "ALTER PUBLICATION " + ident + " SET TABLE " + list
		if list == "" {
			// SET TABLE needs at least one table: drop whatever is there.
			sql = "ALTER PUBLICATION " + ident + " DROP TABLE " + strings.Join(current, ", ")
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("walfollow: setting the tables of publication %s (the role must own them): %w", pub.name, err)
		}
		for _, p := range ps {
			if _, ok := have[p.schema+"."+p.relation]; !ok && p.inserts == pub.inserts {
				joined = append(joined, p)
			}
		}
	}
	return joined, nil
}

// publicationIs reports whether publication name holds exactly the
// relations of ps with the given inserts flag, each with its column list,
// and returns the relations it holds: have by name, quoted for dropping
// them.
func publicationIs(ctx context.Context, conn *pgx.Conn, name string, ps []published, inserts bool) (same bool, have map[string]string, quoted []string, err error) {
	rows, err := conn.Query(ctx, `
		SELECT format('%I.%I', n.nspname, c.relname), n.nspname || '.' || c.relname,
			CASE WHEN pr.prattrs IS NULL THEN '*'
			ELSE array_to_string(array(SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = ANY(pr.prattrs) ORDER BY attname), ',') END
		FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
		JOIN pg_class c ON c.oid = pr.prrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE p.pubname = $1`, name)
	if err != nil {
		return false, nil, nil, fmt.Errorf("walfollow: reading publication %s: %w", name, err)
	}
	have = map[string]string{}
	for rows.Next() {
		var q, rel, cols string
		if err := rows.Scan(&q, &rel, &cols); err != nil {
			rows.Close()
			return false, nil, nil, fmt.Errorf("walfollow: reading publication %s: %w", name, err)
		}
		have[rel] = cols
		quoted = append(quoted, q)
	}
	if err := rows.Err(); err != nil {
		return false, nil, nil, fmt.Errorf("walfollow: reading publication %s: %w", name, err)
	}
	want := map[string]string{}
	for _, p := range ps {
		if p.inserts != inserts {
			continue
		}
		cols := "*"
		if p.columns != nil {
			sorted := slices.Clone(p.columns)
			slices.Sort(sorted)
			cols = strings.Join(sorted, ",")
		}
		want[p.schema+"."+p.relation] = cols
	}
	return maps.Equal(have, want), have, quoted, nil
}

// slotExists reports whether the slot exists, and refuses one that
// another plugin or database owns.
func slotExists(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var plugin, database, current string
	err := conn.QueryRow(ctx, `SELECT coalesce(plugin, ''), coalesce(database::text, ''), current_database()
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&plugin, &database, &current)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("walfollow: reading replication slot %s: %w", name, err)
	}
	if plugin != "pgoutput" || database != current {
		return false, fmt.Errorf("walfollow: replication slot %s exists for plugin %q in database %q, not pgoutput in %q: choose another capture.wal_slot or drop it",
			name, plugin, database, current)
	}
	return true, nil
}

// dropSlot drops the slot, if it exists.
func dropSlot(ctx context.Context, conn *pgx.Conn, name string) error {
	if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", name); err != nil {
		return fmt.Errorf("walfollow: dropping replication slot %s: %w", name, err)
	}
	return nil
}

// resolver names the configured table of a published relation: itself,
// or for an inheritance child its nearest configured ancestor.
func resolver(ctx context.Context, conn *pgx.Conn, rules *extract.Rules) Resolver {
	return func(relationID uint32, schema, name string) (string, bool, error) {
		if t, ok := rules.Stored(schema + "." + name); ok {
			return t.Name(), true, nil
		}
		rows, err := conn.Query(ctx, `
			WITH RECURSIVE up(oid, depth) AS (
				SELECT inhparent, 1 FROM pg_inherits WHERE inhrelid = $1
				UNION ALL SELECT i.inhparent, up.depth + 1 FROM pg_inherits i JOIN up ON i.inhrelid = up.oid)
			SELECT n.nspname, c.relname FROM up JOIN pg_class c ON c.oid = up.oid JOIN pg_namespace n ON n.oid = c.relnamespace
			ORDER BY up.depth`, relationID)
		if err != nil {
			return "", false, fmt.Errorf("walfollow: reading the ancestors of %s.%s: %w", schema, name, err)
		}
		ancestors, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Schema, Name string }])
		if err != nil {
			return "", false, fmt.Errorf("walfollow: reading the ancestors of %s.%s: %w", schema, name, err)
		}
		for _, a := range ancestors {
			if t, ok := rules.Stored(a.Schema + "." + a.Name); ok {
				return t.Name(), true, nil
			}
		}
		return "", false, nil
	}
}
