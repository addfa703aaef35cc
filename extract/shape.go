package extract

import (
	"slices"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Clients that inline their values (psycopg2, Supabase vecs) send the same
// INSERT again and again with other literals: a chat memory's add is one
// such text per message. A shape is such a text with the content of each
// plain literal replaced by a placeholder; texts of one shape parse to the
// same tree but for those literals' values. Shapes analyses each shape
// once and gives later texts of it that analysis with their own values, so
// they are scanned, not parsed.
//
// Only shapes whose every placeholder is a value of a VALUES row (bare or
// under casts) are reused: there a literal's content is data the analysis
// keeps, never something it decides by (a DO body, a set_config argument,
// a literal in a WHERE or ON CONFLICT clause are). Any other text is
// analysed in full every time.

// shapeOf returns sql with the content of each plain '…' literal replaced by
// a placeholder, and those contents in order (takeOut). A literal is plain
// when no prefix (E, N, U&, B, X, a type name) comes right before its
// quote and its content is plain (plainContent): its value is then its
// content, under any standard_conforming_strings.
func shapeOf(sql string) (shape string, literals []string, ok bool) {
	return takeOut(sql, func(start, end int) bool {
		prefixed := start >= 2 && (identCont(sql[start-2]) || sql[start-2] == '&')
		return !prefixed && plainContent(sql[start:end])
	})
}

// plainContent reports whether a literal's value is its content and the
// parser reads it as it is: no doubled quote, no backslash, no NUL (where
// the parser's C string ends) and valid UTF-8 (anything else the server
// refuses).
func plainContent(s string) bool {
	return strings.IndexByte(s, '\'') < 0 && strings.IndexByte(s, '\\') < 0 && strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// maxShapes bounds a Shapes; past it, it starts again empty. Shapes longer
// than maxShapeText are not kept.
const (
	maxShapes    = 64
	maxShapeText = 4 << 10
)

// Shapes remembers the analyses of INSERT texts by their shape, for one
// connection: it is not safe for concurrent use. Make a new one when the
// rules change.
type Shapes struct {
	rules *Rules
	known map[string]shapeAnalysis
}

// shapeAnalysis is what a shape analyses to; reusable is false for shapes
// a text of which must be analysed in full.
type shapeAnalysis struct {
	reusable bool
	analyses []*Analysis // with placeholders where values go
}

// Shapes returns an empty cache of analyses by shape under r.
func (r *Rules) Shapes() *Shapes {
	return &Shapes{rules: r, known: map[string]shapeAnalysis{}}
}

// AnalyzeUnder is Rules.AnalyzeUnder, reusing the analysis of an earlier
// text of the same shape under the same search paths.
func (c *Shapes) AnalyzeUnder(sql string, paths [][]string) ([]*Analysis, error) {
	shape, literals, ok := shapeOf(sql)
	if !ok {
		return c.rules.AnalyzeUnder(sql, paths)
	}
	if len(shape) > maxShapeText {
		// Numbers inline (ARRAY[0.1, …]) stay in the shape: such texts
		// rarely repeat, and would fill the cache.
		return c.rules.AnalyzeUnder(sql, paths)
	}
	key := shapeKey(shape, paths)
	known, ok := c.known[key]
	if !ok {
		known = c.analyzeShape(shape, len(literals), paths)
		if len(c.known) >= maxShapes {
			clear(c.known)
		}
		c.known[key] = known
	}
	if !known.reusable {
		return c.rules.AnalyzeUnder(sql, paths)
	}
	if len(known.analyses) == 0 {
		return nil, nil // as Rules.AnalyzeUnder: the text writes nothing configured
	}
	out := make([]*Analysis, len(known.analyses))
	for i, a := range known.analyses {
		out[i] = a.withLiterals(literals)
	}
	return out, nil
}

// analyzeShape analyses a shape once, if its placeholders are all values
// of the VALUES rows of one INSERT.
func (c *Shapes) analyzeShape(shape string, placeholders int, paths [][]string) shapeAnalysis {
	res, err := pg.Parse(shape)
	if err != nil || len(res.Stmts) != 1 || valuesPlaceholders(res.Stmts[0].Stmt) != placeholders {
		return shapeAnalysis{}
	}
	if len(paths) == 0 {
		paths = [][]string{nil}
	}
	p := parsedText{sql: shape, res: res}
	as := c.rules.analyzeParsed(p, paths[0])
	for _, sp := range paths[1:] {
		as = mergeAnalyses(as, c.rules.analyzeParsed(p, sp))
	}
	return shapeAnalysis{reusable: true, analyses: as}
}

// valuesPlaceholders counts the placeholders that are values of an
// INSERT's VALUES rows, bare or under casts.
func valuesPlaceholders(n *pg.Node) int {
	ins := n.GetInsertStmt()
	if ins == nil || ins.SelectStmt == nil {
		return 0
	}
	count := 0
	for _, vl := range ins.SelectStmt.GetSelectStmt().GetValuesLists() {
		for _, item := range vl.GetList().GetItems() {
			for item.GetTypeCast() != nil {
				item = item.GetTypeCast().Arg
			}
			if s := item.GetAConst().GetSval(); s != nil && strings.HasPrefix(s.Sval, placeholderPrefix) {
				count++
			}
		}
	}
	return count
}

// shapeKey joins a shape and the search paths it is analysed under.
func shapeKey(shape string, paths [][]string) string {
	var b strings.Builder
	b.WriteString(shape)
	for _, p := range paths {
		b.WriteByte(0)
		for _, schema := range p {
			b.WriteString(schema)
			b.WriteByte(1)
		}
	}
	return b.String()
}

// withLiterals returns a copy of a, analysed from a shape, with the
// shape's literals put back (restore).
func (a *Analysis) withLiterals(literals []string) *Analysis {
	out := *a
	out.rows = slices.Clone(a.rows)
	for i := range out.rows {
		out.rows[i].cols = slices.Clone(out.rows[i].cols)
	}
	out.sets = slices.Clone(a.sets)
	out.ids = slices.Clone(a.ids)
	out.restore(literals)
	return &out
}
