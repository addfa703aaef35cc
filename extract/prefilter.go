package extract

import "strings"

// Mentions reports whether sql may name a configured table, or a function
// or relation through which the server writes one (Rules.WithWriters): a
// case-insensitive substring search for those names, with no parsing and
// no allocation. False means Analyze would return nothing.
//
// Text with a Unicode-escaped identifier (U&"d\0061ta") could spell a table
// name without containing it, so any "U&" also answers true.
func (r *Rules) Mentions(sql string) bool { return len(r.pending) > 0 || r.mentioned.in(sql) }

// nameSet finds any of a set of names in a text, ignoring ASCII case,
// without allocating. Any "U&" in the text counts as a match too.
type nameSet struct {
	// names are the lower-cased names; byFirst indexes them by their
	// first byte.
	names   [][]byte
	byFirst [256][]int
	starts  [256]bool // bytes that may start a name or "U&", either case
}

// add puts name in the set (once, however often it is added).
func (s *nameSet) add(name string) {
	s.starts['u'], s.starts['U'] = true, true
	if name == "" {
		return
	}
	low := lowerASCII(name)
	for _, n := range s.byFirst[low[0]] {
		if string(s.names[n]) == string(low) {
			return
		}
	}
	s.byFirst[low[0]] = append(s.byFirst[low[0]], len(s.names))
	s.starts[low[0]], s.starts[toUpper(low[0])] = true, true
	s.names = append(s.names, low)
}

// in reports whether sql contains any name of the set, or "U&".
func (s *nameSet) in(sql string) bool {
	// One pass over the text: only bytes that can start a name (in either
	// case) are looked at further.
	for i := 0; i < len(sql); i++ {
		if !s.starts[sql[i]] {
			continue
		}
		c := toLower(sql[i])
		for _, n := range s.byFirst[c] {
			if hasPrefixFold(sql[i:], s.names[n]) {
				return true
			}
		}
		if c == 'u' && i+1 < len(sql) && sql[i+1] == '&' {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains lower (already lower case),
// ignoring ASCII case. Non-ASCII bytes must match exactly, which is how
// PostgreSQL folds unquoted identifiers too (ASCII only in UTF-8).
func containsFold(s string, lower []byte) bool {
	if k := caselessByte(lower); k >= 0 {
		// That byte matches only itself: only where s holds it can lower
		// start, k bytes before.
		for off := 0; ; {
			j := strings.IndexByte(s[off:], lower[k])
			if j < 0 {
				return false
			}
			if i := off + j - k; i >= 0 && hasPrefixFold(s[i:], lower) {
				return true
			}
			off += j + 1
		}
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		if hasPrefixFold(s[i:], lower) {
			return true
		}
	}
	return false
}

// caselessByte is the index of the first byte of lower that is not a
// lower-case ASCII letter (so that toLower maps only that byte to it), or
// -1.
func caselessByte(lower []byte) int {
	for k, c := range lower {
		if c < 'a' || c > 'z' {
			return k
		}
	}
	return -1
}

// hasPrefixFold reports whether s starts with lower, ignoring ASCII case.
func hasPrefixFold(s string, lower []byte) bool {
	if len(s) < len(lower) {
		return false
	}
	for j, c := range lower {
		if toLower(s[j]) != c {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases the ASCII letters of s only, as the comparisons
// here do (strings.ToLower would also change non-ASCII letters, which then
// never match).
func lowerASCII(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		b[i] = toLower(c)
	}
	return b
}

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func toUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
