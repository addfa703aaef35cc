package extract

// Mentions reports whether sql may name a configured table: a
// case-insensitive substring search for the configured relation names, with
// no parsing and no allocation. False means Analyze would return nothing.
//
// Text with a Unicode-escaped identifier (U&"d\0061ta") could spell a table
// name without containing it, so any "U&" also answers true.
func (r *Rules) Mentions(sql string) bool {
	for _, name := range r.names {
		if containsFold(sql, name) {
			return true
		}
	}
	return containsFold(sql, unicodeEscape)
}

var unicodeEscape = []byte("u&")

// containsFold reports whether s contains lower (already lower case),
// ignoring ASCII case. Non-ASCII bytes must match exactly, which is how
// PostgreSQL folds unquoted identifiers too (ASCII only in UTF-8).
func containsFold(s string, lower []byte) bool {
	n := len(lower)
	if n == 0 {
		return true
	}
	first := lower[0]
	for i := 0; i+n <= len(s); i++ {
		if toLower(s[i]) != first {
			continue
		}
		j := 1
		for j < n && toLower(s[i+j]) == lower[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
