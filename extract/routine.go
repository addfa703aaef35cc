package extract

import (
	"encoding/json"
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Reading the bodies of functions, procedures and rules for what they
// write and call. SQL bodies are parsed; PL/pgSQL bodies go through
// PL/pgSQL's own parser, whose every embedded SQL statement and
// expression is then parsed; dynamic SQL (EXECUTE), other languages and
// anything that does not parse fall to the text rule (textnames.go).

// routineEffects reads one function or procedure.
func routineEffects(rt Routine) effects {
	var e effects
	switch strings.ToLower(rt.Language) {
	case "sql":
		if strings.TrimSpace(rt.Source) == "" && rt.Definition != "" {
			atomicBodyEffects(rt.Definition, &e)
		} else {
			sqlEffects(rt.Source, &e)
		}
	case "plpgsql":
		if rt.Definition == "" || plpgsqlEffects(rt.Definition, &e) != nil {
			e = effects{texts: []string{rt.Source}}
		}
	default:
		e.texts = append(e.texts, rt.Source)
	}
	return e
}

// ruleEffects reads a rule's actions from its CREATE RULE text.
func ruleEffects(def string) effects {
	var e effects
	res, err := pg.Parse(def)
	if err != nil {
		e.texts = append(e.texts, def)
		return e
	}
	for _, raw := range res.Stmts {
		if rs := raw.Stmt.GetRuleStmt(); rs != nil {
			for _, a := range rs.Actions {
				nodeEffects(a, &e)
			}
		}
	}
	return e
}

// sqlEffects reads SQL text, one statement or several.
func sqlEffects(src string, e *effects) {
	res, err := pg.Parse(src)
	if err != nil {
		e.texts = append(e.texts, src)
		return
	}
	for _, raw := range res.Stmts {
		nodeEffects(raw.Stmt, e)
	}
}

// atomicBodyEffects reads a SQL-standard body (BEGIN ATOMIC … END) from
// the function's definition.
func atomicBodyEffects(def string, e *effects) {
	res, err := pg.Parse(def)
	if err != nil {
		e.texts = append(e.texts, def)
		return
	}
	for _, raw := range res.Stmts {
		if cf := raw.Stmt.GetCreateFunctionStmt(); cf != nil {
			listEffects(cf.SqlBody, e)
		}
	}
}

// listEffects reads the statements of a (possibly nested) list.
func listEffects(n *pg.Node, e *effects) {
	if n == nil {
		return
	}
	if l := n.GetList(); l != nil {
		for _, item := range l.Items {
			listEffects(item, e)
		}
		return
	}
	nodeEffects(n, e)
}

// nodeEffects reads one parsed statement.
func nodeEffects(n *pg.Node, e *effects) {
	if d := n.GetDoStmt(); d != nil {
		e.texts = append(e.texts, doBody(d))
		return
	}
	writeTargets(n, func(rv *pg.RangeVar, ev Events) {
		e.writes = append(e.writes, relWrite{qualName{rv.Schemaname, rv.Relname}, ev})
	})
	funcCalls(n, func(schema, name string) {
		e.calls = append(e.calls, qualName{schema, name})
	})
}

// doBody is the code of a DO block.
func doBody(d *pg.DoStmt) string {
	for _, a := range d.Args {
		if de := a.GetDefElem(); de != nil && de.Defname == "as" {
			return de.Arg.GetString_().GetSval()
		}
	}
	return ""
}

// plpgsqlEffects reads a PL/pgSQL function from its definition. PL/pgSQL's
// parser gives the function as JSON in which every piece of SQL is a
// PLpgSQL_expr with its query text and the mode it is parsed in.
func plpgsqlEffects(def string, e *effects) error {
	if err := checkPlpgsqlDefinition(def); err != nil {
		return err
	}
	js, err := pg.ParsePlPgSqlToJSON(def)
	if err != nil {
		return err
	}
	var tree any
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		return err
	}
	plpgsqlExprs(tree, false, func(query string, mode int, dynamic bool) {
		switch {
		case dynamic:
			// EXECUTE: the statement is a string built at run time.
			e.texts = append(e.texts, query)
		case mode == plpgsqlParseDefault:
			sqlEffects(query, e)
		default:
			sqlEffects("SELECT "+expressionOf(query, mode), e)
		}
	})
	return nil
}

// checkPlpgsqlDefinition makes sure def is one CREATE FUNCTION with a
// body (AS '…'), which pg_get_functiondef always prints: pg_query's
// PL/pgSQL parser asserts that, aborting the whole process otherwise.
func checkPlpgsqlDefinition(def string) error {
	if strings.IndexByte(def, 0) >= 0 {
		return errors.New("extract: function definition holds a NUL byte")
	}
	res, err := pg.Parse(def)
	if err != nil {
		return err
	}
	if len(res.Stmts) != 1 || res.Stmts[0].Stmt.GetCreateFunctionStmt() == nil {
		return errors.New("extract: not one CREATE FUNCTION")
	}
	cf := res.Stmts[0].Stmt.GetCreateFunctionStmt()
	if len(cf.Funcname) == 0 || cf.Funcname[0].GetString_() == nil {
		return errors.New("extract: CREATE FUNCTION without a name")
	}
	body := false
	for _, o := range cf.Options {
		de := o.GetDefElem()
		if de == nil || de.Defname != "as" {
			continue
		}
		l := de.Arg.GetList()
		if l == nil {
			return errors.New("extract: CREATE FUNCTION with an unexpected body")
		}
		for _, item := range l.Items {
			if item.GetString_() == nil {
				return errors.New("extract: CREATE FUNCTION with an unexpected body")
			}
			body = true
		}
	}
	if !body {
		return errors.New("extract: CREATE FUNCTION without a body")
	}
	return nil
}

// PL/pgSQL parse modes (RawParseMode in PostgreSQL's parser.h) as the JSON
// gives them: a whole statement, or an expression (assignments keep their
// target, "v := f(x)").
const (
	plpgsqlParseDefault = 0
	plpgsqlParseExpr    = 2
)

// expressionOf is the expression part of a PL/pgSQL expression text: the
// right-hand side of an assignment.
func expressionOf(query string, mode int) string {
	if mode != plpgsqlParseExpr {
		if i := strings.Index(query, ":="); i >= 0 {
			return query[i+2:]
		}
	}
	return query
}

// plpgsqlExprs calls f for every PLpgSQL_expr under v. dynamic marks the
// query of EXECUTE, FOR … IN EXECUTE, RETURN QUERY EXECUTE and OPEN … FOR
// EXECUTE, whose text is the SQL to run rather than SQL itself.
func plpgsqlExprs(v any, dynamic bool, f func(query string, mode int, dynamic bool)) {
	switch x := v.(type) {
	case []any:
		for _, item := range x {
			plpgsqlExprs(item, false, f)
		}
	case map[string]any:
		for k, item := range x {
			switch k {
			case "PLpgSQL_expr":
				if m, ok := item.(map[string]any); ok {
					q, _ := m["query"].(string)
					mode, _ := m["parseMode"].(float64)
					f(q, int(mode), dynamic)
				}
			case "PLpgSQL_stmt_dynexecute", "PLpgSQL_stmt_dynfors":
				if m, ok := item.(map[string]any); ok {
					for kk, sub := range m {
						plpgsqlExprs(sub, kk == "query", f)
					}
				}
			default:
				plpgsqlExprs(item, k == "dynquery", f)
			}
		}
	}
}
