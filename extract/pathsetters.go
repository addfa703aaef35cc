package extract

import (
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Functions that change the session's search_path.
//
// A function or procedure that runs SET search_path or calls set_config
// (or updates pg_settings) without a SET search_path clause of its own
// leaves the caller's search_path changed when it returns. The proxy
// cannot know the new path from the call, so a statement calling such a
// function sets it to one the proxy cannot follow (see ClassifySearchPath
// for the same from statements themselves).

// PathSetter is a function or procedure whose code may change the
// session's search_path.
type PathSetter struct {
	Schema, Name string
}

// findPathSetters lists the routines of c whose code names search_path,
// set_config or pg_settings, sorted. The body alone is read (prosrc): a
// SET clause in the function's header restores the path when the function
// returns. A BEGIN ATOMIC body is read from the whole definition.
func findPathSetters(c Catalog) []PathSetter {
	var out []PathSetter
	for _, rt := range c.Routines {
		body := rt.Source
		if strings.TrimSpace(body) == "" {
			body = rt.Definition
		}
		if namedIn(body, "search_path") || namedIn(body, "set_config") || namedIn(body, "pg_settings") {
			p := PathSetter{rt.Schema, rt.Name}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b PathSetter) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
	return out
}

// pathSetterIndex is PathSetters compiled for the hot path.
type pathSetterIndex struct {
	names   nameSet
	schemas map[string][]string // by function name
}

func newPathSetterIndex(ps []PathSetter) *pathSetterIndex {
	if len(ps) == 0 {
		return nil
	}
	idx := &pathSetterIndex{schemas: map[string][]string{}}
	for _, p := range ps {
		idx.names.add(p.Name)
		idx.schemas[p.Name] = append(idx.schemas[p.Name], p.Schema)
	}
	return idx
}

// CallsPathSetter reports whether sql calls a function or procedure whose
// code may change search_path (Writers.PathSetters): after it runs, the
// session's path is not known. Texts that name none are turned away
// without a parse. An unqualified call may be any schema's function of
// that name. A nil *Rules calls none.
func (r *Rules) CallsPathSetter(sql string) bool {
	if r == nil || r.pathSetters == nil {
		return false
	}
	idx := r.pathSetters
	if !idx.names.in(sql) {
		return false
	}
	res, err := pg.Parse(sql)
	if err != nil {
		return false // the server refuses it too
	}
	found := false
	for _, raw := range res.Stmts {
		funcCalls(raw.Stmt, func(schema, name string) {
			if schemas, ok := idx.schemas[name]; ok && (schema == "" || slices.Contains(schemas, schema)) {
				found = true
			}
		})
	}
	return found
}
