package extract

import (
	"reflect"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// defaultSearchPath is PostgreSQL's default, what RESET or SET … TO DEFAULT
// restores (absent a per-role or per-database setting Lethe cannot see).
var defaultSearchPath = []string{"$user", "public"}

// SearchPathChange is what one statement does to search_path.
type SearchPathChange struct {
	// Path is the new search_path, each name a schema name as stored
	// (already case-folded); nil when Reset or Unknown.
	Path []string
	// Reset: RESET search_path, SET search_path TO DEFAULT, RESET ALL or
	// DISCARD ALL restore the session's reset value (the startup
	// parameter, else the role's, the database's or the server's setting).
	Reset bool
	// Local: SET LOCAL or set_config(…, true), undone when the transaction
	// ends, commit or not.
	Local bool
	// Unknown: the statement sets search_path to a value it does not spell
	// out (set_config with a parameter or an expression, or called from a
	// query whose rows decide whether it runs at all).
	Unknown bool
}

// ClassifySearchPath reports whether sql changes search_path and how: SET
// [SESSION|LOCAL] search_path TO/= a, b; SET SCHEMA 'a'; SET search_path TO
// DEFAULT; RESET search_path; RESET ALL; DISCARD ALL; and SELECT
// set_config('search_path', 'a, b', is_local). When the text holds several
// statements the last change wins (Unknown if they disagree on Local).
// Statements that may change it in a way they do not spell out are
// Unknown: set_config anywhere else (in a CTE, a VALUES list, a subquery,
// an INSERT … SELECT), an UPDATE of pg_settings, a DO block that names
// search_path, set_config or pg_settings. Like ClassifyTx it turns other
// statements away without a parse, so that a megabyte of inline vectors is
// not scanned twice.
//
// Not seen: changes made by functions and procedures (a function that
// calls set_config or runs SET search_path without a SET clause of its
// own leaves the session's path changed).
func ClassifySearchPath(sql string) (SearchPathChange, bool) {
	if !mayChangeSearchPath(sql) {
		return SearchPathChange{}, false
	}
	res, err := pg.Parse(sql)
	if err != nil {
		return SearchPathChange{}, false // PostgreSQL refuses it too
	}
	var change SearchPathChange
	found := false
	for _, raw := range res.Stmts {
		var c SearchPathChange
		var ok bool
		text := statementText(sql, raw)
		switch {
		case raw.Stmt.GetSelectStmt() != nil:
			var seen int
			c, ok, seen = selectSearchPathChange(raw.Stmt.GetSelectStmt())
			if countFold(text, []byte("set_config")) > seen {
				// set_config called where the statement's shape does not
				// show it (inside CASE, a subquery, a CTE, VALUES): do not
				// guess.
				c, ok = SearchPathChange{Unknown: true}, true
			}
		case raw.Stmt.GetVariableSetStmt() != nil, raw.Stmt.GetDiscardStmt() != nil, raw.Stmt.GetVariableShowStmt() != nil:
			c, ok = stmtSearchPathChange(raw.Stmt)
		default:
			// UPDATE pg_settings SET setting = … WHERE name = E'search\_path',
			// INSERT … SELECT set_config(…), a DO block running SET.
			if hiddenPathWords(text) || (raw.Stmt.GetDoStmt() != nil && containsFold(text, []byte("search_path"))) {
				c, ok = SearchPathChange{Unknown: true}, true
			}
		}
		if !ok {
			continue
		}
		if found && c.Local != change.Local {
			c = SearchPathChange{Unknown: true}
		}
		change, found = c, true
	}
	return change, found
}

// hiddenPathWords reports whether text names set_config or pg_settings,
// through which a statement of any kind may set search_path, or holds a
// "U&" that may spell them. It runs on every statement, so it looks only
// around the bytes '_' and '&', which a vector literal does not hold.
func hiddenPathWords(text string) bool {
	for off := 0; ; {
		j := strings.IndexByte(text[off:], '_')
		if j < 0 {
			break
		}
		i := off + j
		if i >= 3 && hasPrefixFold(text[i-3:], []byte("set_config")) || i >= 2 && hasPrefixFold(text[i-2:], []byte("pg_settings")) {
			return true
		}
		off = i + 1
	}
	for off := 0; ; {
		j := strings.IndexByte(text[off:], '&')
		if j < 0 {
			return false
		}
		i := off + j
		if i > 0 && text[i-1]|0x20 == 'u' {
			return true
		}
		off = i + 1
	}
}

// pathWords are the words a statement that changes search_path holds:
// SET search_path or SCHEMA, set_config, pg_settings, RESET, DISCARD.
var pathWords = []string{"search_path", "reset", "discard", "schema", "set_config", "pg_settings"}

// multiStatementPathWords are the words that make a text of several
// statements worth parsing (any "U&" counts too).
var multiStatementPathWords = func() (s nameSet) {
	for _, w := range pathWords {
		s.add(w)
	}
	return s
}()

// SeveralStatements reports whether sql may hold more than one statement:
// a semicolon before its end ("SELECT 1;" is one statement).
func SeveralStatements(sql string) bool {
	return strings.Contains(strings.TrimRight(sql, " \t\r\n;"), ";")
}

// MayHideEffects reports whether a text may hold something capture
// follows besides writes to configured tables: several statements (a
// transaction control among them) or a word of a search_path change
// (pathWords). It is a plain substring test, so it reads the same text
// the same way whatever the server's reading settings are.
func MayHideEffects(sql string) bool {
	if SeveralStatements(sql) {
		return true
	}
	for _, w := range pathWords {
		if containsFold(sql, []byte(w)) {
			return true
		}
	}
	return false
}

// mayChangeSearchPath is ClassifySearchPath's filter before a parse: it
// looks at the first word, and scans the text once for the names that
// matter, without allocating.
func mayChangeSearchPath(sql string) bool {
	if strings.Contains(sql, ";") {
		return multiStatementPathWords.in(sql)
	}
	switch w := firstWord(sql); {
	case strings.EqualFold(w, "reset"), strings.EqualFold(w, "discard"):
		return true
	case strings.EqualFold(w, "set"):
		// SET SCHEMA 'x' is SET search_path; U&"search_path" may spell it.
		return containsFold(sql, []byte("search_path")) || containsFold(sql, []byte("schema")) || containsFold(sql, []byte("u&"))
	case strings.EqualFold(w, "select"), strings.EqualFold(w, "do"):
		if containsFold(sql, []byte("search_path")) {
			return true
		}
	}
	return hiddenPathWords(sql)
}

// statementText is the text of one of the statements sql was parsed into.
func statementText(sql string, raw *pg.RawStmt) string {
	start := min(int(raw.StmtLocation), len(sql))
	if raw.StmtLen == 0 {
		return sql[start:] // the last statement runs to the end
	}
	return sql[start:min(start+int(raw.StmtLen), len(sql))]
}

// countFold counts the occurrences of lower (already lower case) in s,
// ignoring ASCII case.
func countFold(s string, lower []byte) int {
	n := 0
	for i := 0; i+len(lower) <= len(s); i++ {
		if hasPrefixFold(s[i:], lower) {
			n++
		}
	}
	return n
}

// SearchPathSet is ClassifySearchPath for callers that follow only the
// path: RESET yields PostgreSQL's default, and a change to a value the
// statement does not spell out is not reported.
func SearchPathSet(sql string) ([]string, bool) {
	c, ok := ClassifySearchPath(sql)
	return c.pathOrDefault(ok)
}

func (c SearchPathChange) pathOrDefault(ok bool) ([]string, bool) {
	switch {
	case !ok || c.Unknown:
		return nil, false
	case c.Reset:
		return defaultSearchPath, true
	}
	return c.Path, true
}

// stmtSearchPath is stmtSearchPathChange for Analyze, which follows a SET
// search_path earlier in the same text.
func stmtSearchPath(n *pg.Node) ([]string, bool) {
	c, ok := stmtSearchPathChange(n)
	return c.pathOrDefault(ok)
}

func stmtSearchPathChange(n *pg.Node) (SearchPathChange, bool) {
	if v := n.GetVariableSetStmt(); v != nil {
		// GUC names are case-insensitive: SET "Search_Path" works too.
		isPath := strings.EqualFold(v.Name, "search_path")
		switch v.Kind {
		case pg.VariableSetKind_VAR_RESET_ALL:
			return SearchPathChange{Reset: true}, true
		case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
			if isPath {
				return SearchPathChange{Reset: true, Local: v.IsLocal}, true
			}
		case pg.VariableSetKind_VAR_SET_VALUE:
			if !isPath {
				return SearchPathChange{}, false
			}
			// Each argument is one schema name, quoted or not: PostgreSQL
			// quotes string arguments as identifiers, so '"a, b"' is one
			// schema named "a, b".
			out := []string{}
			for _, a := range v.Args {
				c := a.GetAConst()
				if c == nil || c.Isnull {
					return SearchPathChange{Unknown: true, Local: v.IsLocal}, true
				}
				out = append(out, constText(c))
			}
			return SearchPathChange{Path: out, Local: v.IsLocal}, true
		}
		return SearchPathChange{}, false
	}
	if d := n.GetDiscardStmt(); d != nil {
		// DISCARD ALL includes RESET ALL.
		return SearchPathChange{Reset: true}, d.Target == pg.DiscardMode_DISCARD_ALL
	}
	if sel := n.GetSelectStmt(); sel != nil {
		c, ok, _ := selectSearchPathChange(sel)
		return c, ok
	}
	return SearchPathChange{}, false
}

// selectSearchPathChange reads set_config('search_path', …) calls at the
// top of a SELECT's target list; seen counts the set_config calls found
// there, whatever the setting.
func selectSearchPathChange(sel *pg.SelectStmt) (change SearchPathChange, ok bool, seen int) {
	calls := 0
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		fc := rt.Val.GetFuncCall()
		if fc == nil || !strings.EqualFold(operatorName(fc.Funcname), "set_config") {
			continue
		}
		seen++
		if len(fc.Args) != 3 {
			continue // PostgreSQL refuses it
		}
		name := fc.Args[0].GetAConst()
		if name == nil || name.GetSval() == nil {
			change, calls = SearchPathChange{Unknown: true}, calls+1 // which setting? assume ours
			continue
		}
		if !strings.EqualFold(name.GetSval().Sval, "search_path") {
			continue
		}
		calls++
		change = setConfigChange(fc.Args[1].GetAConst(), fc.Args[2].GetAConst())
	}
	if calls == 0 {
		return SearchPathChange{}, false, seen
	}
	// Run zero or several times, or twice with different is_local: the
	// statement does not say what the path becomes.
	if calls > 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil || sel.HavingClause != nil ||
		len(sel.GroupClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || sel.Op != pg.SetOperation_SETOP_NONE {
		return SearchPathChange{Unknown: true}, true, seen
	}
	return change, true, seen
}

// setConfigChange reads set_config('search_path', value, is_local) with
// literal arguments; value is the GUC's text form, a list PostgreSQL splits
// as identifiers (unquoted names fold to lower case).
func setConfigChange(val, local *pg.A_Const) SearchPathChange {
	isLocal, ok := boolConst(local)
	if !ok || val == nil || val.GetSval() == nil {
		return SearchPathChange{Unknown: true}
	}
	p, err := ParseSearchPath(val.GetSval().Sval)
	if err != nil {
		// PostgreSQL would likely refuse it too, but if Lethe's reading of
		// the list is wrong, guessing could lose a tag.
		return SearchPathChange{Unknown: true, Local: isLocal}
	}
	return SearchPathChange{Path: p, Local: isLocal}
}

// boolConst reads a literal boolean argument: true, or a string PostgreSQL's
// boolin accepts ('t', 'off', …).
func boolConst(c *pg.A_Const) (v, ok bool) {
	switch {
	case c == nil || c.Isnull:
		return false, false
	case c.GetBoolval() != nil:
		return c.GetBoolval().Boolval, true
	case c.GetSval() != nil:
		switch strings.ToLower(strings.TrimSpace(c.GetSval().Sval)) {
		case "t", "true", "y", "yes", "on", "1":
			return true, true
		case "f", "false", "n", "no", "off", "0":
			return false, true
		}
	}
	return false, false
}

// Schemas returns the schemas of the configured tables and of the
// relations that write them (views, partitions, children), each once, in
// no particular order. Resolving an unqualified name against each of them
// in turn finds every configured table it may denote, whatever search_path
// the session has.
func (r *Rules) Schemas() []string { return r.schemas }

// AnalyzeUnder is Analyze for a session whose search_path is one of
// several candidates (a proxy that has not yet seen the server's answer to
// a SET or a ROLLBACK cannot know which): it returns every write that any
// of them resolves the statement to, each once. Attributing a write to a
// table that did not get the row is harmless; missing one is not.
func (r *Rules) AnalyzeUnder(sql string, paths [][]string) ([]*Analysis, error) {
	if len(paths) == 0 {
		return r.Analyze(sql, nil)
	}
	parsed, err := parseForAnalysis(sql)
	if err != nil {
		return nil, err
	}
	out := r.analyzeParsed(parsed, paths[0])
	for _, p := range paths[1:] {
		out = mergeAnalyses(out, r.analyzeParsed(parsed, p))
	}
	return out, nil
}

// mergeAnalyses adds to out each analysis of as that out lacks, as a
// multiset: a text that writes the same rows twice keeps both.
func mergeAnalyses(out, as []*Analysis) []*Analysis {
	matched := make([]bool, len(out), len(out)+len(as))
	for _, a := range as {
		found := false
		for j, b := range out {
			if !matched[j] && reflect.DeepEqual(a, b) {
				matched[j], found = true, true
				break
			}
		}
		if !found {
			out = append(out, a)
			matched = append(matched, true)
		}
	}
	return out
}

// DefaultSearchPath is PostgreSQL's default search_path, "$user", public.
// The slice is shared: do not modify it.
func DefaultSearchPath() []string { return defaultSearchPath }

// ParseSearchPath reads search_path in its text form (a startup parameter,
// set_config's argument) as PostgreSQL splits it: a comma-separated list of
// identifiers, unquoted ones folded to lower case.
func ParseSearchPath(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return []string{}, nil
	}
	return splitIdentifiers(v, ',')
}
