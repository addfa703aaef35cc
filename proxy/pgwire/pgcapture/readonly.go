package pgcapture

import "github.com/lethe-privacy/lethe/extract"

// Reads cost what they cost without capture.
//
// A text that names a configured table is analysed, and a simple Query's
// text is analysed every time it comes (it carries literals, so it is not
// cached). Most such texts are reads, and a parse would find no write in
// them. readsOnly recognises the commonest read by its bytes alone, so that
// it goes by as a statement naming nothing configured does.

// readsOnly reports whether sql is one SELECT that cannot write: it begins
// with the keyword SELECT, holds no parenthesis, no word INTO and no
// second statement. Without a parenthesis it calls no function (no writer
// function, no set_config), holds no subquery, and starts no writable CTE
// (those start with WITH); without INTO it creates no table (SELECT …
// INTO); a SELECT fires no trigger and no rule that writes. Analysis of
// such a text finds nothing (extract.Rules.AnalyzeUnder), so it is not
// parsed. Anything else answers false and is judged as before.
func readsOnly(sql string) bool {
	i := 0
	for i < len(sql) && isSpace(sql[i]) {
		i++
	}
	const kw = "select"
	if len(sql)-i < len(kw) {
		return false
	}
	for j := 0; j < len(kw); j++ {
		if sql[i+j]|0x20 != kw[j] {
			return false
		}
	}
	if rest := sql[i+len(kw):]; rest != "" && isIdentByte(rest[0]) {
		return false // SELECTED, SELECT_X…: an identifier, not the keyword
	}
	for k := i + len(kw); k < len(sql); k++ {
		switch sql[k] {
		case '(':
			return false
		case 'i', 'I':
			if k+4 <= len(sql) && sql[k+1]|0x20 == 'n' && sql[k+2]|0x20 == 't' && sql[k+3]|0x20 == 'o' {
				return false // SELECT … INTO a new table (or any word holding "into": judged as before)
			}
		}
	}
	return !extract.SeveralStatements(sql)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentByte reports whether c may continue an unquoted identifier.
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
