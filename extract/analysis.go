package extract

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Kind is the shape of a write to a configured table.
type Kind uint8

const (
	// KindInsert is INSERT … VALUES (with or without ON CONFLICT).
	KindInsert Kind = iota + 1
	// KindUpdate is UPDATE; it yields tags only when it sets a subject column.
	KindUpdate
	// KindDelete is DELETE; it yields tags only when its WHERE names ids.
	KindDelete
	// KindCopy is COPY … FROM STDIN; its tags come from a CopyDecoder.
	KindCopy
	// KindUnattributed is a write whose rows cannot be known from the
	// statement; its one tag is OpUnattributed with Reason.
	KindUnattributed
	// KindUncovered is a write to a table no rule covers
	// (Writers.Uncovered, uncovered.go): Table is that table, Reason
	// says why; it has no tags, and the relay refuses it.
	KindUncovered
)

func (k Kind) String() string {
	switch k {
	case KindInsert:
		return "insert"
	case KindUpdate:
		return "update"
	case KindDelete:
		return "delete"
	case KindCopy:
		return "copy"
	case KindUnattributed:
		return "unattributed"
	case KindUncovered:
		return "uncovered"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Analysis is what one statement does to one configured table, computed
// once per statement text and reusable for every execution (it holds only
// the literals of id and subject columns, never the statement text). It is
// immutable and safe for concurrent use.
type Analysis struct {
	Table  string // configured table, "schema.name"
	Kind   Kind
	Reason string // for KindUnattributed: why, in words; it names tables, columns and functions, never values (it is logged)

	rule *table

	// KindInsert: one entry per VALUES row.
	rows []row
	// KindUpdate: the new value per t.columns (valUnset when not set).
	sets        []value
	setsSubject bool
	// KindUpdate and KindDelete: the ids the WHERE clause limits rows to.
	ids   []idSource
	byIDs bool
	// KindCopy.
	copy *copySpec
}

// row holds the values one VALUES row gives the id and subject columns.
type row struct {
	id   value
	cols []value // per t.columns
}

// Analyze parses one statement text, which may hold several statements as a
// simple Query can, and returns one Analysis per statement that writes a
// configured table (a statement writing two, via a writable CTE, yields two).
// Statements that write no configured table yield nothing. searchPath
// resolves unqualified names (empty means ["public"]); "$user" may be any
// schema, so a name it could reach resolves to every relation of that name;
// a SET search_path inside sql applies to the statements that follow it.
// A text PostgreSQL cannot parse is an error.
func (r *Rules) Analyze(sql string, searchPath []string) ([]*Analysis, error) {
	p, err := parseForAnalysis(sql)
	if err != nil {
		return nil, err
	}
	return r.analyzeParsed(p, searchPath), nil
}

// parsedText is a statement text parsed for analysis: its shortened form
// (elide) when that parses, else the text itself.
type parsedText struct {
	sql    string // the text parsed
	res    *pg.ParseResult
	elided []string // what the shortened text left out; nil for the full text
}

func parseForAnalysis(sql string) (parsedText, error) {
	if short, elided, ok := elide(sql); ok {
		if res, err := pg.Parse(short); err == nil {
			return parsedText{short, res, elided}, nil
		}
		// The shortened text did not parse: trust only the full parse.
	}
	res, err := pg.Parse(sql)
	if err != nil {
		return parsedText{}, parseError(err)
	}
	return parsedText{sql: sql, res: res}, nil
}

// analyzeParsed analyses a parsed text under searchPath; it leaves the
// parse as it is, so one parse serves several search paths.
func (r *Rules) analyzeParsed(p parsedText, searchPath []string) []*Analysis {
	var out []*Analysis
	mayCall := r.writers != nil && r.writers.calls.in(p.sql)
	for _, raw := range p.res.Stmts {
		// A SET search_path earlier in the same text applies to the
		// statements after it.
		if sp, ok := stmtSearchPath(raw.Stmt); ok {
			searchPath = sp
			continue
		}
		out = append(out, r.analyzeStmt(raw.Stmt, searchPath)...)
		out = append(out, r.serverSideWrites(raw.Stmt, statementText(p.sql, raw), mayCall)...)
		out = append(out, r.pendingWrites(raw.Stmt)...)
		out = append(out, r.uncoveredWrites(raw.Stmt, searchPath)...)
	}
	if p.elided != nil {
		for _, a := range out {
			a.restore(p.elided)
		}
	}
	return out
}

func (r *Rules) analyzeStmt(n *pg.Node, sp []string) []*Analysis {
	switch {
	case n.GetInsertStmt() != nil:
		s := n.GetInsertStmt()
		out := r.writableCTEs(s.WithClause, sp)
		for _, t := range r.relation(s.Relation, sp) {
			out = append(out, t.write(func() *Analysis { return r.analyzeInsert(t, s) }))
		}
		return out
	case n.GetUpdateStmt() != nil:
		s := n.GetUpdateStmt()
		out := r.writableCTEs(s.WithClause, sp)
		for _, t := range r.relation(s.Relation, sp) {
			out = append(out, t.write(func() *Analysis { return analyzeUpdate(t, s) }))
		}
		return out
	case n.GetDeleteStmt() != nil:
		s := n.GetDeleteStmt()
		out := r.writableCTEs(s.WithClause, sp)
		for _, t := range r.relation(s.Relation, sp) {
			out = append(out, t.write(func() *Analysis { return analyzeDelete(t, s) }))
		}
		return out
	case n.GetMergeStmt() != nil:
		s := n.GetMergeStmt()
		out := r.writableCTEs(s.WithClause, sp)
		for _, t := range r.relation(s.Relation, sp) {
			out = append(out, unattributed(t, "MERGE: the rows it writes depend on a join Lethe cannot evaluate"))
		}
		return out
	case n.GetSelectStmt() != nil:
		return r.writableCTEs(n.GetSelectStmt().WithClause, sp)
	case n.GetTruncateStmt() != nil:
		var out []*Analysis
		for _, rel := range n.GetTruncateStmt().Relations {
			for _, t := range r.relation(rel.GetRangeVar(), sp) {
				out = append(out, unattributed(t, "TRUNCATE removes every row without naming them"))
			}
		}
		return out
	case n.GetCopyStmt() != nil:
		s := n.GetCopyStmt()
		if !s.IsFrom {
			return nil // COPY … TO reads
		}
		var out []*Analysis
		for _, t := range r.relation(s.Relation, sp) {
			out = append(out, t.write(func() *Analysis { return analyzeCopy(t, s) }))
		}
		return out
	case n.GetAlterTableStmt() != nil:
		return r.attach(n.GetAlterTableStmt(), sp)
	case n.GetExplainStmt() != nil:
		s := n.GetExplainStmt()
		// Only EXPLAIN ANALYZE runs the statement.
		if explainAnalyzes(s.Options) {
			return r.analyzeStmt(s.Query, sp)
		}
		return nil
	case n.GetPrepareStmt() != nil:
		// PREPARE in SQL: the write happens at EXECUTE, whose parameters
		// Lethe would have to pair with this text; refuse to guess.
		var out []*Analysis
		for _, a := range r.analyzeStmt(n.GetPrepareStmt().Query, sp) {
			out = append(out, unattributed(a.rule, "PREPARE … AS a write: SQL-level prepared statements run later through EXECUTE, which Lethe cannot attribute; use the protocol's prepared statements"))
		}
		return out
	}
	return nil
}

// write is analyse for a write to t, unless t is a relation whose writes
// cannot be attributed.
func (t *table) write(analyse func() *Analysis) *Analysis {
	if t.refuse != "" {
		return unattributed(t, t.refuse)
	}
	return analyse()
}

// writableCTEs turns each write to a configured table inside WITH into an
// unattributed Analysis: its rows may feed, or be fed by, the rest of the
// statement.
func (r *Rules) writableCTEs(w *pg.WithClause, sp []string) []*Analysis {
	if w == nil {
		return nil
	}
	var out []*Analysis
	for _, c := range w.Ctes {
		cte := c.GetCommonTableExpr()
		if cte == nil {
			continue
		}
		for _, a := range r.analyzeStmt(cte.Ctequery, sp) {
			if a.Kind == KindUnattributed {
				out = append(out, a)
				continue
			}
			out = append(out, unattributed(a.rule, fmt.Sprintf("writable CTE (WITH %s AS (%s …)): its rows are tied to the rest of the statement", quoteIdent(cte.Ctename), writeVerb(a.Kind))))
		}
	}
	return out
}

func writeVerb(k Kind) string {
	switch k {
	case KindInsert:
		return "INSERT"
	case KindUpdate:
		return "UPDATE"
	case KindDelete:
		return "DELETE"
	}
	return "a write"
}

func explainAnalyzes(opts []*pg.Node) bool {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defname != "analyze" {
			continue
		}
		if d.Arg == nil {
			return true
		}
		if c := d.Arg.GetAConst(); c != nil {
			switch constText(c) {
			case "false", "off", "0":
				return false
			}
		}
		if s := d.Arg.GetString_(); s != nil {
			switch s.Sval {
			case "false", "off", "0":
				return false
			}
		}
		return true
	}
	return false
}

func (r *Rules) relation(rv *pg.RangeVar, sp []string) []*table {
	if rv == nil {
		return nil
	}
	return r.resolve(rv.Schemaname, rv.Relname, sp)
}

func unattributed(t *table, reason string) *Analysis {
	return &Analysis{Table: t.name, Kind: KindUnattributed, Reason: reason, rule: t}
}

// Tags computes the tags of one execution of the statement given its bound
// parameters. An error means the parameters could not be read (a missing
// parameter, an undecodable binary value, invalid JSON in a subject column);
// the caller should treat the write as unattributed.
func (a *Analysis) Tags(p Params) ([]Tag, error) {
	switch a.Kind {
	case KindUnattributed:
		return []Tag{{Table: a.Table, Op: OpUnattributed, Reason: a.Reason}}, nil
	case KindInsert:
		return a.insertTags(p)
	case KindUpdate:
		return a.updateTags(p)
	case KindDelete:
		return a.deleteTags(p)
	case KindCopy:
		return nil, nil // rows arrive as CopyData: use NewCopyDecoder
	case KindUncovered:
		return nil, nil // refused, never tagged
	}
	return nil, nil
}

// subjects appends the subjects of a row whose subject columns have the
// values vals (per t.columns, already resolved), skipping unwritten ones.
func (t *table) rowSubjects(dst []string, vals []string, present []bool) ([]string, error) {
	for i, s := range t.subjects {
		c := t.subjCol[i]
		if !present[c] {
			continue
		}
		if len(s.Path) == 0 {
			dst = append(dst, vals[c])
			continue
		}
		var err error
		if dst, err = jsonSubjects(vals[c], s.Path, dst); err != nil {
			return dst, fmt.Errorf("%w (column %s of %s)", err, quoteIdent(t.columns[c]), t.name)
		}
	}
	return dst, nil
}

// columnRole is how a subject column's binary values are read.
func (t *table) columnRole(c int) role {
	if t.jsonColumn(c) {
		return roleJSON
	}
	return rolePlain
}
