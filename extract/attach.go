package extract

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// attach judges ALTER TABLE commands that move rows into or out of a
// configured table without writing them: ATTACH PARTITION and INHERIT
// bring the rows already in a table into it, DETACH PARTITION and NO
// INHERIT take rows Lethe tagged as the table's out of it (forget would
// no longer reach them). No statement names those rows, so each is
// unattributed.
func (r *Rules) attach(s *pg.AlterTableStmt, sp []string) []*Analysis {
	if s.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil // ALTER INDEX … ATTACH PARTITION moves no rows
	}
	var out []*Analysis
	for _, c := range s.Cmds {
		cmd := c.GetAlterTableCmd()
		if cmd == nil {
			continue
		}
		switch cmd.Subtype {
		case pg.AlterTableType_AT_AttachPartition, pg.AlterTableType_AT_DetachPartition:
			part := cmd.Def.GetPartitionCmd().GetName()
			verb := "ATTACH PARTITION %s brings the rows already in it into %s"
			if cmd.Subtype == pg.AlterTableType_AT_DetachPartition {
				verb = "DETACH PARTITION %s takes its rows out of %s"
			}
			for _, t := range r.relation(s.Relation, sp) {
				out = append(out, unattributed(t, fmt.Sprintf("ALTER TABLE … "+verb+" without naming them: "+moveRows, rangeVarName(part), t.name)))
			}
		case pg.AlterTableType_AT_AddInherit, pg.AlterTableType_AT_DropInherit:
			verb := "INHERIT %s brings the rows already in %s into it"
			if cmd.Subtype == pg.AlterTableType_AT_DropInherit {
				verb = "NO INHERIT %s takes the rows of %s out of it"
			}
			for _, t := range r.relation(cmd.Def.GetRangeVar(), sp) {
				out = append(out, unattributed(t, fmt.Sprintf("ALTER TABLE … "+verb+" without naming them: "+moveRows, t.name, rangeVarName(s.Relation))))
			}
		}
	}
	return out
}

const moveRows = "Lethe cannot attribute them; attach or inherit only an empty table and insert the rows through the proxy, or move them with INSERT and DELETE"

// rangeVarName prints a relation as a statement named it.
func rangeVarName(rv *pg.RangeVar) string {
	if rv == nil {
		return "a table"
	}
	if rv.Schemaname != "" {
		return quoteIdent(rv.Schemaname) + "." + quoteIdent(rv.Relname)
	}
	return quoteIdent(rv.Relname)
}
