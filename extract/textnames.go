package extract

// The text rule: code Lethe cannot parse (a DO block, a function in
// PL/Python, dynamic SQL built at run time) is judged by the names it
// contains. A name counts where it stands as a whole identifier (not
// "docs" inside "my_docs_archive"), ignoring ASCII case; quotes and dots
// around it do not matter. Names assembled at run time ('do' || 'cs') or
// spelled with escapes are not seen.

// namedIn reports whether text contains name as a whole identifier,
// ignoring ASCII case.
func namedIn(text, name string) bool {
	if name == "" {
		return false
	}
	low := lowerASCII(name)
	for i := 0; i+len(low) <= len(text); i++ {
		if toLower(text[i]) != low[0] || !hasPrefixFold(text[i:], low) {
			continue
		}
		if (i == 0 || !identByte(text[i-1])) && (i+len(low) == len(text) || !identByte(text[i+len(low)])) {
			return true
		}
	}
	return false
}

// identByte reports whether c can be part of an unquoted identifier
// (PostgreSQL counts every non-ASCII byte as a letter).
func identByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// writeKeywords are the SQL verbs that write a table.
var writeKeywords = []string{"insert", "update", "delete", "merge", "truncate", "copy"}

// namesWrite reports whether text contains a write verb as a word: a
// function whose source names a configured table without one only reads
// it (a similarity search such as Supabase's match_documents).
func namesWrite(text string) bool {
	for _, k := range writeKeywords {
		if namedIn(text, k) {
			return true
		}
	}
	return false
}
