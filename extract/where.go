package extract

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// idSource is one place in a WHERE clause that names ids: a single value
// (id = $1, id IN ('a', 'b')) or an array (id = ANY($1)).
type idSource struct {
	v     value
	array bool
}

// whereIDs finds the ids a WHERE clause limits the statement to. ok is
// false when the clause does not limit rows to listed ids. In an AND, one
// id predicate suffices (the others only narrow it further); in an OR,
// every branch must name ids.
func whereIDs(n *pg.Node, t *table, alias string) (ids []idSource, ok bool) {
	if n == nil {
		return nil, false
	}
	if b := n.GetBoolExpr(); b != nil {
		switch b.Boolop {
		case pg.BoolExprType_AND_EXPR:
			for _, arg := range b.Args {
				if ids, ok := whereIDs(arg, t, alias); ok {
					return ids, true
				}
			}
		case pg.BoolExprType_OR_EXPR:
			for _, arg := range b.Args {
				more, ok := whereIDs(arg, t, alias)
				if !ok {
					return nil, false
				}
				ids = append(ids, more...)
			}
			return ids, true
		}
		return nil, false
	}
	e := n.GetAExpr()
	if e == nil || operatorName(e.Name) != "=" {
		return nil, false
	}
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		other := e.Rexpr
		if !isIDColumn(e.Lexpr, t, alias) {
			if !isIDColumn(e.Rexpr, t, alias) {
				return nil, false
			}
			other = e.Lexpr
		}
		v := valueOf(other)
		if v.kind != valConst && v.kind != valParam {
			return nil, false
		}
		return []idSource{{v: v}}, true
	case pg.A_Expr_Kind_AEXPR_IN:
		if !isIDColumn(e.Lexpr, t, alias) {
			return nil, false
		}
		l := e.Rexpr.GetList()
		if l == nil {
			return nil, false
		}
		return scalarIDs(l.Items)
	case pg.A_Expr_Kind_AEXPR_OP_ANY:
		if !isIDColumn(e.Lexpr, t, alias) {
			return nil, false
		}
		arr := e.Rexpr
		if tc := arr.GetTypeCast(); tc != nil && tc.Arg.GetAArrayExpr() != nil {
			arr = tc.Arg
		}
		if ae := arr.GetAArrayExpr(); ae != nil {
			return scalarIDs(ae.Elements)
		}
		v := valueOf(e.Rexpr)
		if v.kind != valConst && v.kind != valParam {
			return nil, false
		}
		return []idSource{{v: v, array: true}}, true
	}
	return nil, false
}

func scalarIDs(items []*pg.Node) ([]idSource, bool) {
	ids := make([]idSource, 0, len(items))
	for _, it := range items {
		v := valueOf(it)
		switch v.kind {
		case valConst, valParam:
			ids = append(ids, idSource{v: v})
		case valNull:
			// id = NULL matches nothing.
		default:
			return nil, false
		}
	}
	return ids, true
}

// isIDColumn reports whether n is a reference to the table's id column,
// bare or qualified by the table's name or alias.
func isIDColumn(n *pg.Node, t *table, alias string) bool {
	c := n.GetColumnRef()
	if c == nil || len(c.Fields) == 0 {
		return false
	}
	var names []string
	for _, f := range c.Fields {
		s := f.GetString_()
		if s == nil {
			return false
		}
		names = append(names, s.Sval)
	}
	if names[len(names)-1] != t.id {
		return false
	}
	switch len(names) {
	case 1:
		return true
	case 2:
		if alias != "" {
			return names[0] == alias
		}
		return names[0] == t.relname
	case 3:
		return alias == "" && names[0] == t.schema && names[1] == t.relname
	}
	return false
}

// resolveIDs computes the ids of one execution.
func resolveIDs(srcs []idSource, p Params) ([]string, error) {
	var out []string
	for _, s := range srcs {
		if !s.array {
			id, ok, err := p.resolve(s.v, roleID)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, id)
			}
			continue
		}
		elems, err := resolveArray(s.v, p)
		if err != nil {
			return nil, err
		}
		out = append(out, elems...)
	}
	return out, nil
}

// resolveArray reads an array value ('{a,b}' or an array parameter, text or
// binary).
func resolveArray(v value, p Params) ([]string, error) {
	switch v.kind {
	case valConst:
		return textArray(v.text)
	case valParam:
		raw, bin, _, err := p.param(v.param)
		if err != nil || raw == nil {
			return nil, err
		}
		if bin {
			return binaryArray(raw, roleID)
		}
		return textArray(string(raw))
	}
	return nil, nil
}
