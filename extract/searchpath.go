package extract

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// defaultSearchPath is PostgreSQL's default, what RESET or SET … TO DEFAULT
// restores (absent a per-role or per-database setting Lethe cannot see).
var defaultSearchPath = []string{"$user", "public"}

// SearchPathSet reports whether sql changes search_path and to what: SET
// [SESSION|LOCAL] search_path TO/= a, b; SET search_path TO DEFAULT; RESET
// search_path; RESET ALL; and SELECT set_config('search_path', 'a, b', …)
// with literal arguments. When the text holds several statements the last
// change wins. Each returned name is a schema name as stored (already
// case-folded). SET LOCAL is reported like SET; the caller must restore the
// old path when the transaction ends.
func SearchPathSet(sql string) ([]string, bool) {
	if !strings.Contains(sql, ";") && !startsSettingStatement(sql) {
		// One statement that is not SET, RESET or SELECT: spare the scans
		// of what may be a megabyte of inline vectors.
		return nil, false
	}
	if !containsFold(sql, []byte("search_path")) && !containsFold(sql, []byte("reset")) {
		return nil, false
	}
	res, err := pg.Parse(sql)
	if err != nil {
		return nil, false
	}
	var path []string
	found := false
	for _, raw := range res.Stmts {
		if p, ok := stmtSearchPath(raw.Stmt); ok {
			path, found = p, true
		}
	}
	return path, found
}

func stmtSearchPath(n *pg.Node) ([]string, bool) {
	if v := n.GetVariableSetStmt(); v != nil {
		switch v.Kind {
		case pg.VariableSetKind_VAR_RESET_ALL:
			return defaultSearchPath, true
		case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
			if v.Name == "search_path" {
				return defaultSearchPath, true
			}
		case pg.VariableSetKind_VAR_SET_VALUE:
			if v.Name != "search_path" {
				return nil, false
			}
			// Each argument is one schema name, quoted or not: PostgreSQL
			// quotes string arguments as identifiers, so '"a, b"' is one
			// schema named "a, b".
			var out []string
			for _, a := range v.Args {
				if c := a.GetAConst(); c != nil && !c.Isnull {
					out = append(out, constText(c))
				}
			}
			return out, true
		}
		return nil, false
	}
	sel := n.GetSelectStmt()
	if sel == nil {
		return nil, false
	}
	var path []string
	found := false
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		fc := rt.Val.GetFuncCall()
		if fc == nil || len(fc.Args) != 3 || !strings.EqualFold(operatorName(fc.Funcname), "set_config") {
			continue
		}
		name, val := fc.Args[0].GetAConst(), fc.Args[1].GetAConst()
		if name == nil || val == nil || name.GetSval() == nil || name.GetSval().Sval != "search_path" || val.GetSval() == nil {
			continue
		}
		// set_config takes the GUC's text form, a list PostgreSQL splits as
		// identifiers (unquoted names fold to lower case).
		p := []string{}
		var err error
		if strings.TrimSpace(val.GetSval().Sval) != "" {
			p, err = splitIdentifiers(val.GetSval().Sval, ',')
		}
		if err != nil {
			continue
		}
		path, found = p, true
	}
	return path, found
}

// startsSettingStatement reports whether sql begins (after blanks and
// comments) with SET, RESET or SELECT, the statements that can change
// search_path.
func startsSettingStatement(sql string) bool {
	return firstWordIs(sql, "set", "reset", "select")
}

// SetsLocally reports whether sql is SET LOCAL, whose effect ends with the
// transaction.
func SetsLocally(sql string) bool {
	w := words(sql, 2)
	return len(w) == 2 && w[0] == "set" && w[1] == "local"
}
