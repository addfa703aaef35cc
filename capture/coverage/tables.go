package coverage

import (
	"fmt"
	"slices"
	"strings"
)

// CheckTables judges the tables of one database against p: each table
// that holds vectors or a column named like a subject, unless it is a
// partition or inheritance child of a covered table, needs a rule or an
// ignore; each rule's table should exist and has the columns it reads.
// Findings come out sorted by table, so that runs compare.
func CheckTables(p Policy, tables []Table) []Finding {
	c := newCatalog(tables)
	byName := c.byName
	var out []Finding
	for _, t := range tables {
		if c.hasParent(t) {
			continue // judged with its root, whose rule covers it
		}
		if covered(p, t.FullName()) {
			continue
		}
		vectors, subjects := reasons(p, c.family(t.FullName()))
		if len(vectors) == 0 && len(subjects) == 0 {
			continue
		}
		out = append(out, uncoveredTable(t, vectors, subjects))
	}
	for _, r := range p.Tables {
		t := byName[r.Table]
		if t == nil {
			out = append(out, Finding{
				Severity: Warning, Code: CodeMissingTable, Store: StorePostgres, Table: r.Table, Where: r.Where,
				Message: fmt.Sprintf("capture.tables names %s, which does not exist (yet)", r.Table),
				Fix:     "nothing, if the application creates the table on first use (LangChain.js and others do); otherwise correct the table name in capture.tables",
			})
			continue
		}
		for _, c := range r.Columns {
			if _, ok := t.column(c.Name); ok {
				continue
			}
			out = append(out, Finding{
				Severity: Error, Code: CodeMissingColumn, Store: StorePostgres, Table: r.Table, Column: c.Name, Where: r.Where,
				Message: fmt.Sprintf("capture.tables rule of %s reads column %s (%s), which the table does not have", r.Table, c.Name, c.Key),
				Fix:     fmt.Sprintf("name one of the table's columns (%s) in %s, or add the column to the table", strings.Join(columnNames(t), ", "), c.Key),
			})
		}
	}
	for _, ig := range p.Ignore {
		if ig.Table != "" && byName[ig.Table] == nil {
			out = append(out, Finding{
				Severity: Warning, Code: CodeMissingTable, Store: StorePostgres, Table: ig.Table, Where: ig.Where,
				Message: fmt.Sprintf("coverage.ignore names %s, which does not exist (yet)", ig.Table),
				Fix:     "nothing, if the application creates the table later; otherwise remove the ignore or correct its table name",
			})
		}
	}
	sortFindings(out)
	return out
}

// covered reports whether table has a capture rule or an ignore.
func covered(p Policy, table string) bool {
	if _, ok := p.rule(table); ok {
		return true
	}
	_, ok := p.ignoredTable(table)
	return ok
}

// catalog indexes the tables read by name and by parent.
type catalog struct {
	byName   map[string]*Table
	children map[string][]*Table // by parent's name, in name order
}

func newCatalog(tables []Table) catalog {
	c := catalog{byName: make(map[string]*Table, len(tables)), children: map[string][]*Table{}}
	for i := range tables {
		c.byName[tables[i].FullName()] = &tables[i]
	}
	for i := range tables {
		for _, p := range tables[i].Parents {
			c.children[p] = append(c.children[p], &tables[i])
		}
	}
	for _, ts := range c.children {
		slices.SortFunc(ts, func(a, b *Table) int { return strings.Compare(a.FullName(), b.FullName()) })
	}
	return c
}

// hasParent reports whether t is a partition or child of a table read.
func (c catalog) hasParent(t Table) bool {
	return slices.ContainsFunc(t.Parents, func(p string) bool { return c.byName[p] != nil })
}

// family is root and every table below it (partitions, children, at any
// depth), root first.
func (c catalog) family(root string) []*Table {
	out := []*Table{c.byName[root]}
	seen := map[string]bool{root: true}
	for i := 0; i < len(out); i++ {
		for _, t := range c.children[out[i].FullName()] {
			if !seen[t.FullName()] {
				seen[t.FullName()] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// reasons are the columns that make a root table need a rule: vector
// columns and columns named like subjects, of the table and of its
// partitions and children (an inheritance child may add columns).
func reasons(p Policy, family []*Table) (vectors, subjects []string) {
	for _, t := range family {
		for _, c := range t.Columns {
			switch {
			case c.IsVector() && !slices.Contains(vectors, c.Name):
				vectors = append(vectors, c.Name)
			case !c.IsVector() && p.subjectColumn(c.Name) && !slices.Contains(subjects, c.Name):
				subjects = append(subjects, c.Name)
			}
		}
	}
	return vectors, subjects
}

func uncoveredTable(t Table, vectors, subjects []string) Finding {
	var why []string
	if len(vectors) > 0 {
		why = append(why, plural(len(vectors), "vector column ", "vector columns ")+strings.Join(vectors, ", "))
	}
	if len(subjects) > 0 {
		why = append(why, plural(len(subjects), "column ", "columns ")+strings.Join(subjects, ", ")+" named like a person's id")
	}
	return Finding{
		Severity: Error, Code: CodeUncoveredTable, Store: StorePostgres, Table: t.FullName(), Where: "database",
		Message: fmt.Sprintf("table %s has %s and no rule", t.FullName(), strings.Join(why, " and ")),
		Fix:     tableFix(t, subjects),
	}
}

// tableFix is the YAML of a capture rule for t, with the id and subject
// columns guessed, or of an ignore.
func tableFix(t Table, subjects []string) string {
	id := "ID_COLUMN"
	for _, c := range t.Columns {
		if c.PrimaryKey {
			id = c.Name
		}
	}
	subj := "SUBJECT_COLUMN"
	if len(subjects) > 0 {
		subj = strings.Join(subjects, ", ")
	}
	return "add a capture rule (check the id and subject columns):\n" +
		"  capture:\n    tables:\n" +
		fmt.Sprintf("      - {table: %s, id: %s, subjects: [%s]}\n", t.FullName(), id, subj) +
		"or, if no person's data is there, an ignore with the reason:\n" +
		"  coverage:\n    ignore:\n" +
		fmt.Sprintf("      - {table: %s, reason: \"WHY NO PERSONAL DATA IS THERE\"}", t.FullName())
}

func columnNames(t *Table) []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if c := strings.Compare(a.Table+"\x00"+a.Index+"\x00"+a.Namespace, b.Table+"\x00"+b.Index+"\x00"+b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Column, b.Column)
	})
}

// Uncovered returns the relations whose writes coverage.mode: enforce
// refuses, by "schema.name": each table an uncovered_table finding names,
// and its partitions and children, mapped to the table named.
func Uncovered(findings []Finding, tables []Table) map[string]string {
	c := newCatalog(tables)
	out := map[string]string{}
	for _, f := range findings {
		if f.Code != CodeUncoveredTable || c.byName[f.Table] == nil {
			continue
		}
		for _, t := range c.family(f.Table) {
			out[t.FullName()] = f.Table
		}
	}
	return out
}
