package pgcapture

import (
	"slices"
	"strings"

	"github.com/lethe-privacy/lethe/extract"
)

// How a session reads search_path from what the client sends.

// anyPath stands for a search_path capture cannot know (set_config with a
// parameter, too many possible states): unqualified names resolve against
// every schema that has a configured table. No schema name contains NUL.
var anyPath = []string{"\x00"}

func isAnyPath(p []string) bool { return len(p) == 1 && p[0] == anyPath[0] }

// pathSet is a statement's change to search_path.
type pathSet struct {
	set   bool
	local bool     // SET LOCAL: undone when the transaction ends
	path  []string // never modified: states share it
}

// effect is what a statement does to the session state capture follows:
// transaction control, or a change of search_path. Most statements have
// none.
type effect struct {
	tx   extract.TxControl
	path pathSet
}

func (e effect) none() bool { return e.tx.Kind == extract.TxNone && !e.path.set }

// effectOf classifies a statement's effect on the transaction and
// search_path. Neither takes a parse for the many statements that are
// something else.
func (s *session) effectOf(sql string) effect {
	if tx := extract.ClassifyTx(sql); tx.Kind != extract.TxNone {
		return effect{tx: tx}
	}
	c, ok := extract.ClassifySearchPath(sql)
	if !ok {
		if s.rules.CallsPathSetter(sql) {
			// The function may leave any path behind.
			return effect{path: pathSet{set: true, path: anyPath}}
		}
		return effect{}
	}
	p := pathSet{set: true, local: c.Local, path: c.Path}
	switch {
	case c.Unknown:
		p.path = anyPath
	case c.Reset:
		p.path = s.reset
	}
	return effect{path: p}
}

// resolvable replaces anyPath, a search_path capture cannot know, with
// every schema that has a configured table or a relation that writes one.
func (s *session) resolvable(paths [][]string) [][]string {
	if !slices.ContainsFunc(paths, isAnyPath) {
		return paths
	}
	var out [][]string
	for _, p := range paths {
		if !isAnyPath(p) {
			out = append(out, p)
		}
	}
	for _, schema := range s.rules.Schemas() {
		out = append(out, []string{schema})
	}
	return out
}

// startupSearchPath is the search_path a session starts with, which RESET
// restores: the search_path startup parameter, else one set in the options
// parameter (-c search_path=…, as libpq's options=-csearch_path=… sends),
// else PostgreSQL's default. A per-role or per-database setting (ALTER
// ROLE … SET search_path) is invisible to the proxy.
func startupSearchPath(params map[string]string) []string {
	v, ok := params["search_path"]
	if !ok {
		v, ok = optionsSearchPath(params["options"])
	}
	if !ok {
		return extract.DefaultSearchPath()
	}
	p, err := extract.ParseSearchPath(v)
	if err != nil {
		return anyPath // the server reads it its own way: do not guess
	}
	return p
}

// optionsSearchPath finds search_path in the options startup parameter,
// read as PostgreSQL does (pg_split_opts: blanks separate arguments, a
// backslash escapes the next byte; then -c name=value, -cname=value or
// --name=value, dashes in names standing for underscores; the last
// setting wins).
func optionsSearchPath(options string) (string, bool) {
	var args []string
	var arg strings.Builder
	inArg, escaped := false, false
	for i := 0; i < len(options); i++ {
		c := options[i]
		switch {
		case escaped:
			arg.WriteByte(c)
			escaped = false
		case c == '\\':
			escaped, inArg = true, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if inArg {
				args = append(args, arg.String())
				arg.Reset()
				inArg = false
			}
		default:
			arg.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, arg.String())
	}
	value, found := "", false
	for i := 0; i < len(args); i++ {
		var setting string
		switch a := args[i]; {
		case a == "-c" && i+1 < len(args):
			i++
			setting = args[i]
		case strings.HasPrefix(a, "-c"):
			setting = a[2:]
		case strings.HasPrefix(a, "--"):
			setting = a[2:]
		default:
			continue
		}
		name, v, ok := strings.Cut(setting, "=")
		if ok && strings.EqualFold(strings.ReplaceAll(name, "-", "_"), "search_path") {
			value, found = v, true
		}
	}
	return value, found
}
