package extract

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// DDL that changes what Lethe knows of the catalog.
//
// The relations and functions through which statements write configured
// tables come from the catalog (Rules.WithWriters), read again after DDL
// passes through the proxy. A connection of its own cannot see DDL before
// it commits, though: until then, and until the catalog has been read
// again, the session's writes that follow such DDL cannot be known to be
// attributed right (INSERT INTO the new name of a renamed table, a call of
// a function created in the same transaction). Rules.WithPendingDDL
// refuses them (strict mode) for the configured tables the DDL names.

// DDLChange is what a statement's DDL may change in what Lethe knows.
type DDLChange struct {
	// Tables are the configured tables the DDL names, itself or through
	// a relation or function that writes them ("schema.name", sorted):
	// writes that follow it are unattributed until the catalog has been
	// read again. Empty when the catalog must be read again but no write
	// needs to wait for it.
	Tables []string
	// Reordered are the configured tables whose column order the DDL may
	// change, itself or through a relation that writes them (ADD or DROP
	// COLUMN, DROP TABLE or VIEW, CREATE TABLE of their name; sorted): an
	// INSERT without a column list into them is unattributed until the
	// catalog has been read again (WithPendingColumnOrder).
	Reordered []string
}

// ClassifyDDL reports whether sql (one statement, or several) holds DDL
// after which the catalog must be read again before the next statement is
// analysed: CREATE TABLE … INHERITS / PARTITION OF, CREATE VIEW, FUNCTION,
// PROCEDURE, TRIGGER or RULE, ALTER TABLE that attaches, detaches,
// inherits or enables and disables triggers and rules, a rename, SET
// SCHEMA, CREATE SCHEMA, and DO blocks (which may run any of them). Other statements are turned away on
// their first word, without a parse. CREATE TABLE (… AS) and ALTER TABLE …
// ADD COLUMN of a table that is not temporary count too, with no tables:
// the table or column may need a rule (coverage, capture/coverage). So do
// DDL that may change a configured table's column order (ADD or DROP
// COLUMN, DROP and CREATE TABLE), with Reordered.
func (r *Rules) ClassifyDDL(sql string) (DDLChange, bool) {
	tables, reordered := tableSet{}, tableSet{}
	var found bool
	switch {
	case firstWordIs(sql, "create", "alter", "do", "drop"):
		found = r.classifyDDL(sql, tables, reordered)
	case strings.Contains(sql, ";") && mayHoldDDL(sql):
		// Several statements, or a semicolon in a literal: only the
		// statements that begin like DDL are parsed, not a whole write.
		stmts, err := pg.SplitWithScanner(sql, true)
		if err != nil {
			return DDLChange{}, false // the server refuses it too
		}
		for _, stmt := range stmts {
			if firstWordIs(stmt, "create", "alter", "do", "drop") && r.classifyDDL(stmt, tables, reordered) {
				found = true
			}
		}
	}
	if !found {
		return DDLChange{}, false
	}
	var c DDLChange
	if len(tables) > 0 {
		c.Tables = tables.names()
	}
	if len(reordered) > 0 {
		c.Reordered = reordered.names()
	}
	return c, true
}

// classifyDDL parses sql and adds to tables the configured tables its DDL
// names, and to reordered those whose column order it may change; it
// reports whether it holds DDL ClassifyDDL follows.
func (r *Rules) classifyDDL(sql string, tables, reordered tableSet) bool {
	res, err := pg.Parse(sql)
	if err != nil {
		return false // the server refuses it too
	}
	found := false
	for _, raw := range res.Stmts {
		if re := r.reorders(raw.Stmt); len(re) > 0 {
			found = true
			reordered.addAll(re)
		}
		relevant, concerns := r.ddlStmt(raw.Stmt)
		if !relevant {
			continue
		}
		found = true
		text := statementText(sql, raw)
		if concerns == code && !namesWrite(text) {
			concerns = writersOnly // code that only reads a table does not write it
		}
		tables.addAll(r.tablesNamedIn(text, concerns))
	}
	return found
}

// mayHoldDDL is ClassifyDDL's filter for a text of several statements.
func mayHoldDDL(sql string) bool {
	for _, w := range []string{"create", "alter", "do", "drop"} {
		if namedIn(sql, w) {
			return true
		}
	}
	return false
}

// concern is which names in a DDL statement's text count as naming a
// configured table.
type concern uint8

const (
	nothing     concern = iota // not DDL that Lethe follows
	relations                  // relations, writer functions and fired relations
	code                       // a body: relations only with a write verb
	writersOnly                // writer functions and fired relations only
	schemas                    // ALTER SCHEMA … RENAME: relations and their schemas
	newColumns                 // a new table or column: none (coverage reads it)
)

// ddlStmt reports whether n is DDL after which the catalog must be read
// again, and which of the names it holds concern the writes that follow.
func (r *Rules) ddlStmt(n *pg.Node) (relevant bool, c concern) {
	switch {
	case n.GetCreateStmt() != nil:
		s := n.GetCreateStmt()
		if len(s.InhRelations) > 0 || s.Partbound != nil {
			return true, relations
		}
		return !temporary(s.Relation), newColumns
	case n.GetCreateTableAsStmt() != nil:
		s := n.GetCreateTableAsStmt()
		if s.Objtype != pg.ObjectType_OBJECT_TABLE || s.Into == nil {
			return false, nothing // CREATE MATERIALIZED VIEW: not a table
		}
		return !temporary(s.Into.Rel), newColumns
	case n.GetRenameStmt() != nil:
		if n.GetRenameStmt().RenameType == pg.ObjectType_OBJECT_SCHEMA {
			return true, schemas
		}
		return true, relations
	case n.GetViewStmt() != nil, n.GetCreateTrigStmt() != nil, n.GetRuleStmt() != nil,
		n.GetAlterObjectSchemaStmt() != nil, n.GetCreateSchemaStmt() != nil:
		return true, relations
	case n.GetCreateFunctionStmt() != nil, n.GetDoStmt() != nil:
		return true, code
	case n.GetAlterTableStmt() != nil:
		s := n.GetAlterTableStmt()
		added := false
		for _, c := range s.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd != nil && catalogAlter(cmd.Subtype) {
				return true, relations
			} else if cmd != nil && cmd.Subtype == pg.AlterTableType_AT_AddColumn {
				added = true
			}
		}
		if added && s.Objtype == pg.ObjectType_OBJECT_TABLE {
			return true, newColumns
		}
	}
	// DROP only takes ways of writing away: what Lethe still believes in
	// until the next read over-attributes or refuses, and misses nothing.
	return false, nothing
}

// reorders returns the configured tables whose column order n may
// change: ALTER TABLE … ADD or DROP COLUMN, DROP TABLE, VIEW or FOREIGN
// TABLE, and CREATE TABLE (a table dropped and created again), of a
// configured table or a relation that writes one.
func (r *Rules) reorders(n *pg.Node) tableSet {
	out := tableSet{}
	switch {
	case n.GetAlterTableStmt() != nil:
		s := n.GetAlterTableStmt()
		for _, c := range s.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd != nil &&
				(cmd.Subtype == pg.AlterTableType_AT_AddColumn || cmd.Subtype == pg.AlterTableType_AT_DropColumn) {
				out.addAll(r.namedRelation(s.Relation.GetSchemaname(), s.Relation.GetRelname()))
			}
		}
	case n.GetDropStmt() != nil:
		s := n.GetDropStmt()
		switch s.RemoveType {
		case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_FOREIGN_TABLE:
		default:
			return out
		}
		for _, o := range s.Objects {
			var parts []string
			for _, item := range o.GetList().GetItems() {
				parts = append(parts, item.GetString_().GetSval())
			}
			switch len(parts) {
			case 1:
				out.addAll(r.namedRelation("", parts[0]))
			case 2, 3: // [catalog.]schema.name
				out.addAll(r.namedRelation(parts[len(parts)-2], parts[len(parts)-1]))
			}
		}
	case n.GetCreateStmt() != nil:
		rv := n.GetCreateStmt().Relation
		out.addAll(r.namedRelation(rv.GetSchemaname(), rv.GetRelname()))
	case n.GetCreateTableAsStmt() != nil:
		rv := n.GetCreateTableAsStmt().GetInto().GetRel()
		out.addAll(r.namedRelation(rv.GetSchemaname(), rv.GetRelname()))
	}
	return out
}

// namedRelation returns the configured tables that the relation
// schema.relname may be or write (schema "" may be any schema).
func (r *Rules) namedRelation(schema, relname string) tableSet {
	out := tableSet{}
	for _, t := range r.byName[relname] {
		if schema == "" || schema == t.schema || (schema == "pg_temp" && strings.HasPrefix(t.schema, "pg_temp")) {
			out[r.tables[t.name]] = true
		}
	}
	return out
}

// temporary reports whether a CREATE TABLE makes a temporary table, which
// lives as long as its session and is never checked for coverage.
func temporary(rv *pg.RangeVar) bool {
	return rv != nil && (rv.Relpersistence == "t" || rv.Schemaname == "pg_temp")
}

// catalogAlter reports the ALTER TABLE commands that change how
// statements reach configured tables: partitions, inheritance, triggers
// and rules turned on or off.
func catalogAlter(t pg.AlterTableType) bool {
	switch t {
	case pg.AlterTableType_AT_AttachPartition, pg.AlterTableType_AT_DetachPartition, pg.AlterTableType_AT_DetachPartitionFinalize,
		pg.AlterTableType_AT_AddInherit, pg.AlterTableType_AT_DropInherit,
		pg.AlterTableType_AT_EnableTrig, pg.AlterTableType_AT_EnableAlwaysTrig, pg.AlterTableType_AT_EnableReplicaTrig,
		pg.AlterTableType_AT_EnableTrigAll, pg.AlterTableType_AT_EnableTrigUser,
		pg.AlterTableType_AT_DisableTrig, pg.AlterTableType_AT_DisableTrigAll, pg.AlterTableType_AT_DisableTrigUser,
		pg.AlterTableType_AT_EnableRule, pg.AlterTableType_AT_EnableAlwaysRule, pg.AlterTableType_AT_EnableReplicaRule,
		pg.AlterTableType_AT_DisableRule:
		return true
	}
	return false
}

// tablesNamedIn returns the configured tables text names, by the text
// rule: the names of writer functions and fired relations, and unless c
// is writersOnly their own names and those of relations that write them
// (views, partitions, children); with c schemas, the schemas they are in
// too (ALTER SCHEMA … RENAME moves them all).
func (r *Rules) tablesNamedIn(text string, c concern) tableSet {
	out := tableSet{}
	if c == newColumns {
		return out
	}
	if c != writersOnly {
		for name, ts := range r.byName {
			if namedIn(text, name) {
				for _, t := range ts {
					out[r.tables[t.name]] = true
				}
			}
		}
	}
	if c == schemas {
		for _, t := range r.tables {
			if namedIn(text, t.schema) {
				out[t] = true
			}
		}
	}
	if w := r.writers; w != nil {
		for name, fs := range w.funcs {
			if namedIn(text, name) {
				for _, f := range fs {
					out.addAll(tableSetOf(f.tables))
				}
			}
		}
		for name, fs := range w.fired {
			if namedIn(text, name) {
				for _, f := range fs {
					out.addAll(tableSetOf(f.tables))
				}
			}
		}
	}
	return out
}

func tableSetOf(ts []*table) tableSet {
	out := make(tableSet, len(ts))
	for _, t := range ts {
		out[t] = true
	}
	return out
}

// WithPendingDDL returns rules that refuse, as unattributed writes of
// tables (configured tables, "schema.name"), every statement that may
// write anything: INSERT, UPDATE, DELETE, MERGE, COPY … FROM, TRUNCATE, a
// function call, CALL, DO, EXECUTE. A session uses them after DDL naming
// those tables, until the catalog has been read again (see ClassifyDDL);
// Mentions then answers true for every text. r is not modified.
func (r *Rules) WithPendingDDL(tables []string) *Rules {
	n := *r
	n.pending = r.configured(tables)
	n.pendingReason = "it follows DDL naming " + strings.Join(tableNames(n.pending), ", ") +
		" that Lethe has not read from the catalog yet (it is read once the DDL's transaction has ended): commit the DDL, then write"
	return &n
}

// pendingWrites returns the unattributed analyses of a statement written
// while DDL is pending, or nothing when it writes nothing.
func (r *Rules) pendingWrites(n *pg.Node) []*Analysis {
	if len(r.pending) == 0 || !mayWrite(n) {
		return nil
	}
	out := make([]*Analysis, len(r.pending))
	for i, t := range r.pending {
		out[i] = unattributed(t, r.pendingReason)
	}
	return out
}

// mayWrite reports whether n may write anything when it runs: it writes a
// relation, calls a function (which may write), or runs code Lethe does
// not see.
func mayWrite(n *pg.Node) bool {
	if n.GetDoStmt() != nil || n.GetCallStmt() != nil || n.GetExecuteStmt() != nil {
		return true
	}
	writes := false
	writeTargets(n, func(*pg.RangeVar, Events) { writes = true })
	if !writes {
		funcCalls(n, func(string, string) { writes = true })
	}
	return writes
}
