package pgcapture

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// Judging statements: what a prepared or simple-protocol statement writes,
// under which search_paths, and whether it is refused; the tags of a bound
// write.

// maxCachedAnalyses bounds the per-connection cache of analyses, since a
// client may send endless distinct texts as unnamed statements.
const maxCachedAnalyses = 256

// prepare classifies a statement text and, when it names a configured
// table, analyses it under the search_paths it may be bound under now.
func (s *session) prepare(sql string, types []uint32) *prepared {
	e := s.effectOf(sql)
	if !s.rules.Mentions(sql) || readsOnly(sql) {
		if e.none() {
			return plain
		}
		return newPlain(e)
	}
	var key string
	var paths [][]string
	s.lock(func() { key, paths = s.tx.candidates() })
	return s.analysed(sql, e, types, key, paths)
}

// underCurrentPath returns st analysed under the search_paths a Bind sent
// now may run under: st itself unless they changed since it was analysed.
func (s *session) underCurrentPath(st *prepared) *prepared {
	var key string
	var paths [][]string
	s.lock(func() { key, paths = s.tx.candidates() })
	if key == st.paths {
		return st
	}
	return s.analysed(st.sql, st.eff, st.types, key, paths)
}

// analysed returns the analyses of sql under paths (named by key),
// computed once per connection.
func (s *session) analysed(sql string, e effect, types []uint32, key string, paths [][]string) *prepared {
	k := analysisKey{paths: key, sql: sql}
	if st, ok := s.byText[k]; ok && sameTypes(st.types, types) {
		return st
	}
	st := &prepared{eff: e, sql: sql, paths: key, types: append([]uint32(nil), types...)}
	st.bare = &portal{stmt: st}
	st.analyses, st.refusal = s.analyze(sql, paths)
	if len(s.byText) >= maxCachedAnalyses {
		clear(s.byText)
	}
	s.byText[k] = st
	return st
}

// analyze parses a statement that names a configured table, resolving
// unqualified names under each of paths, and asks capture about what it
// writes: a table no rule covers (coverage.mode enforce), or writes that
// cannot be attributed.
func (s *session) analyze(sql string, paths [][]string) ([]*extract.Analysis, *pgwire.Refusal) {
	as, err := s.shapes.AnalyzeUnder(sql, s.resolvable(paths))
	if err != nil {
		return nil, s.unattributableErr("it names a configured table but could not be parsed", err)
	}
	for _, a := range as {
		// First: capture.mode has no say over coverage, and a write to an
		// uncovered table may resolve to a configured one too.
		if a.Kind == extract.KindUncovered {
			return nil, wireRefusal(s.capture.RefuseUncovered(a.Table, a.Reason))
		}
	}
	for _, a := range as {
		if a.Kind != extract.KindUnattributed {
			continue
		}
		if r := s.unattributable(a.Reason); r != nil {
			return nil, r
		}
	}
	return as, nil
}

// bind computes the tags of a bound write while its parameters are still
// in the relay's buffer.
func (s *session) bind(st *prepared, b pgproto3.Bind) *portal {
	pt := &portal{stmt: st, tags: make([][]extract.Tag, len(st.analyses))}
	params := extract.Params{Values: b.Parameters, Formats: b.ParameterFormatCodes, Types: st.types}
	for i, a := range st.analyses {
		if a.Kind == extract.KindCopy {
			continue
		}
		var err error
		if pt.tags[i], err = a.Tags(params); err != nil {
			pt.err = err
			break
		}
	}
	return pt
}

// unreadable asks capture about parameters the session could not decode.
func (s *session) unreadable(err error) *pgwire.Refusal {
	return s.unattributableErr("its parameters could not be read", err)
}

func sameTypes(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
