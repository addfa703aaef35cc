package extract

import (
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// ParseSubject parses a rule's subject expression, written as it would be in
// SQL: a column (`user_id`), or a path into a json/jsonb column using the
// -> and ->> operators with string keys (`cmetadata->>'user_id'`,
// `payload->'participants'`, `metadata_->'user'->>'id'`). The final operator
// does not matter: a JSON array found at the path yields one subject per
// element either way. Identifiers follow PostgreSQL's rules (unquoted names
// fold to lower case).
func ParseSubject(expr string) (Subject, error) {
	if strings.TrimSpace(expr) == "" {
		return Subject{}, errors.New("extract: empty subject expression")
	}
	// The expression is parsed by PostgreSQL's own grammar so quoting and
	// escapes behave exactly as they would in a query.
	res, err := pg.Parse("SELECT " + expr)
	if err != nil {
		return Subject{}, fmt.Errorf("extract: subject %q: %w", expr, err)
	}
	if len(res.Stmts) != 1 {
		return Subject{}, fmt.Errorf("extract: subject %q is not one expression", expr)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) != 0 || sel.WhereClause != nil {
		return Subject{}, fmt.Errorf("extract: subject %q is not one expression", expr)
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Name != "" {
		return Subject{}, fmt.Errorf("extract: subject %q is not one expression", expr)
	}
	var path []string
	n := rt.Val
	for {
		if e := n.GetAExpr(); e != nil {
			op := operatorName(e.Name)
			if e.Kind != pg.A_Expr_Kind_AEXPR_OP || (op != "->" && op != "->>") || e.Lexpr == nil {
				return Subject{}, fmt.Errorf("extract: subject %q: only a column and -> / ->> with string keys are supported", expr)
			}
			c := e.Rexpr.GetAConst()
			if c == nil || c.GetSval() == nil {
				return Subject{}, fmt.Errorf("extract: subject %q: JSON path keys must be string literals like 'user_id'", expr)
			}
			path = append(path, c.GetSval().Sval)
			n = e.Lexpr
			continue
		}
		col := n.GetColumnRef()
		if col == nil || len(col.Fields) != 1 || col.Fields[0].GetString_() == nil {
			return Subject{}, fmt.Errorf("extract: subject %q must start with a plain column name", expr)
		}
		// Keys were collected from the outside in.
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
		return Subject{Column: col.Fields[0].GetString_().Sval, Path: path}, nil
	}
}

// String renders the subject as SQL (`cmetadata->'user'->>'id'`).
func (s Subject) String() string {
	var b strings.Builder
	b.WriteString(quoteIdent(s.Column))
	for i, k := range s.Path {
		if i == len(s.Path)-1 {
			b.WriteString("->>")
		} else {
			b.WriteString("->")
		}
		b.WriteString("'" + strings.ReplaceAll(k, "'", "''") + "'")
	}
	return b.String()
}

// quoteIdent quotes an identifier only when PostgreSQL would need it to.
func quoteIdent(s string) string {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || (i > 0 && (c >= '0' && c <= '9' || c == '$'))) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// operatorName returns the last element of an operator's qualified name.
func operatorName(name []*pg.Node) string {
	if len(name) == 0 {
		return ""
	}
	if s := name[len(name)-1].GetString_(); s != nil {
		return s.Sval
	}
	return ""
}
