package extract

// Mentions reports whether sql may name a configured table: a
// case-insensitive substring search for the configured relation names, with
// no parsing and no allocation. False means Analyze would return nothing.
//
// Text with a Unicode-escaped identifier (U&"d\0061ta") could spell a table
// name without containing it, so any "U&" also answers true.
func (r *Rules) Mentions(sql string) bool {
	// One pass over the text: only bytes that can start a name (in either
	// case) are looked at further.
	for i := 0; i < len(sql); i++ {
		if !r.starts[sql[i]] {
			continue
		}
		c := toLower(sql[i])
		for _, n := range r.byFirst[c] {
			if hasPrefixFold(sql[i:], r.names[n]) {
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
	for i := 0; i+len(lower) <= len(s); i++ {
		if hasPrefixFold(s[i:], lower) {
			return true
		}
	}
	return false
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
