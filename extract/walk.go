package extract

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Walks over a statement's tree for what it makes the server run: the
// relations it writes (whose triggers and rules fire) and the functions it
// calls. Both serve the hot path, for statements that name a writer, and
// the reading of function bodies and rule actions (catalog.go).

// writeTargets calls f for each relation n writes when it runs, with the
// kinds of write: the target of INSERT, UPDATE, DELETE, MERGE, COPY … FROM
// and TRUNCATE, also inside WITH, EXPLAIN ANALYZE and PREPARE (which
// writes when executed, out of Lethe's sight).
func writeTargets(n *pg.Node, f func(rv *pg.RangeVar, e Events)) {
	if n == nil {
		return
	}
	switch {
	case n.GetInsertStmt() != nil:
		s := n.GetInsertStmt()
		withTargets(s.WithClause, f)
		writeTargets(s.SelectStmt, f) // INSERT … WITH w AS (DELETE …) SELECT
		e := OnInsert
		if oc := s.OnConflictClause; oc != nil && oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
			e |= OnUpdate
		}
		target(s.Relation, e, f)
	case n.GetUpdateStmt() != nil:
		s := n.GetUpdateStmt()
		withTargets(s.WithClause, f)
		target(s.Relation, OnUpdate, f)
	case n.GetDeleteStmt() != nil:
		s := n.GetDeleteStmt()
		withTargets(s.WithClause, f)
		target(s.Relation, OnDelete, f)
	case n.GetMergeStmt() != nil:
		s := n.GetMergeStmt()
		withTargets(s.WithClause, f)
		target(s.Relation, OnInsert|OnUpdate|OnDelete, f)
	case n.GetSelectStmt() != nil:
		withTargets(n.GetSelectStmt().WithClause, f)
	case n.GetTruncateStmt() != nil:
		for _, rel := range n.GetTruncateStmt().Relations {
			target(rel.GetRangeVar(), OnTruncate, f)
		}
	case n.GetCopyStmt() != nil:
		if s := n.GetCopyStmt(); s.IsFrom {
			target(s.Relation, OnInsert, f)
		}
	case n.GetExplainStmt() != nil:
		if s := n.GetExplainStmt(); explainAnalyzes(s.Options) {
			writeTargets(s.Query, f)
		}
	case n.GetPrepareStmt() != nil:
		writeTargets(n.GetPrepareStmt().Query, f)
	}
}

func target(rv *pg.RangeVar, e Events, f func(*pg.RangeVar, Events)) {
	if rv != nil {
		f(rv, e)
	}
}

func withTargets(w *pg.WithClause, f func(*pg.RangeVar, Events)) {
	if w == nil {
		return
	}
	for _, c := range w.Ctes {
		if cte := c.GetCommonTableExpr(); cte != nil {
			writeTargets(cte.Ctequery, f)
		}
	}
}

// funcCalls calls f for each function or procedure n calls when it runs:
// every function call in its tree and CALL. It skips what only defines
// code that runs later, not now (CREATE FUNCTION, VIEW, RULE, TRIGGER,
// POLICY, a table's column defaults) and EXPLAIN without ANALYZE.
func funcCalls(n *pg.Node, f func(schema, name string)) {
	if n == nil {
		return
	}
	walk(n, func(m proto.Message) bool {
		switch x := m.(type) {
		case *pg.FuncCall:
			if schema, name := funcName(x.Funcname); name != "" {
				f(schema, name)
			}
		case *pg.CreateFunctionStmt, *pg.ViewStmt, *pg.RuleStmt, *pg.CreateTrigStmt, *pg.CreateStmt,
			*pg.CreatePolicyStmt, *pg.AlterPolicyStmt, *pg.CommentStmt:
			return false
		case *pg.ExplainStmt:
			return explainAnalyzes(x.Options)
		}
		return true
	})
}

// funcName reads a function name as the parser gives it: name,
// schema.name or catalog.schema.name.
func funcName(parts []*pg.Node) (schema, name string) {
	switch len(parts) {
	case 0:
		return "", ""
	case 1:
		return "", parts[0].GetString_().GetSval()
	}
	return parts[len(parts)-2].GetString_().GetSval(), parts[len(parts)-1].GetString_().GetSval()
}

// walk calls visit for m and, depth first, every message below it;
// visit returns false to skip a message's children. The parse tree is
// protobuf, so one reflective walk reaches every node kind.
func walk(m proto.Message, visit func(proto.Message) bool) {
	if m == nil || !visit(m) {
		return
	}
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil || fd.IsMap():
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walk(l.Get(i).Message().Interface(), visit)
			}
		default:
			walk(v.Message().Interface(), visit)
		}
		return true
	})
}
