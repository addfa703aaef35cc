package extract

import (
	"strconv"
	"strings"
)

// Statements with inline vectors (psycopg2, Supabase vecs) carry megabytes
// of '[0.1,0.2,…]' literals that no rule ever reads, and pg_query spends
// tens of milliseconds parsing and copying them. Before parsing a long
// text, elide replaces the content of each long literal that holds only
// number-array characters with a short placeholder; the analysis then gets
// the original text back for any value it keeps (restore). The structure
// of the statement is unchanged: only the inside of literals is replaced.

// Eliding starts at texts of elideMinText bytes and replaces literals of at
// least elideMinLiteral bytes (variables so tests can exercise small texts).
var (
	elideMinText    = 2 << 10
	elideMinLiteral = 512
)

// elide returns sql with long number-array literals replaced by
// placeholders, and their texts to restore; ok is false when nothing was
// elided (or the text could not be scanned with certainty), and the caller
// parses sql as it is.
func elide(sql string) (string, []string, bool) {
	if len(sql) < elideMinText {
		return sql, nil, false
	}
	return takeOut(sql, func(start, end int) bool {
		return end-start >= elideMinLiteral && numberArray(sql[start:end])
	})
}

// placeholderPrefix starts every placeholder, followed by the index of the
// literal it stands for; a text that holds it is never taken apart, so no
// placeholder can be confused with the client's own text.
const placeholderPrefix = "lethe_elided_"

// takeOut returns sql with the content of each literal that take selects
// (given its content's bounds) replaced by a placeholder, and those
// contents in order. ok is false when none was taken out, the text cannot
// be scanned with certainty (stringLiterals) or it holds the prefix. The
// statement's structure is unchanged: only the inside of literals is.
func takeOut(sql string, take func(start, end int) bool) (out string, literals []string, ok bool) {
	if strings.Contains(sql, placeholderPrefix) {
		return sql, nil, false
	}
	var b strings.Builder
	last := 0 // sql[last:] is not yet copied to b
	ok = stringLiterals(sql, func(start, end int) {
		if !take(start, end) {
			return
		}
		if b.Len() == 0 {
			b.Grow(256)
		}
		b.WriteString(sql[last:start])
		b.WriteString(placeholderPrefix)
		b.WriteString(strconv.Itoa(len(literals)))
		literals = append(literals, sql[start:end])
		last = end
	})
	if !ok || len(literals) == 0 {
		return sql, nil, false
	}
	b.WriteString(sql[last:])
	return b.String(), literals, true
}

// stringLiterals calls found with the bounds of the content (between the
// quotes) of each character-string literal in sql, as PostgreSQL's lexer
// reads it with standard_conforming_strings on (scan.l): '…', E'…', N'…'
// and U&'…'. Bit strings (B'…', X'…'), quoted identifiers, dollar quotes
// and comments are stepped over. It returns false, maybe after some
// calls, where it cannot be sure to read as the server does: a block
// comment, a string followed by another quote (the lexer may continue the
// literal across a newline), a quote or $ right after a number, a $ that
// starts neither a parameter nor a dollar quote, or an unterminated
// literal or identifier.
func stringLiterals(sql string, found func(start, end int)) bool {
	n := len(sql)
	for i := 0; i < n; {
		c := sql[i]
		switch {
		case c == '\'':
			end, ok := stringEnd(sql, i+1, false)
			if !ok {
				return false
			}
			found(i+1, end)
			i = end + 1
		case identStart(c):
			j := i + 1
			for j < n && identCont(sql[j]) {
				j++
			}
			if j+1 < n && j == i+1 && (c == 'u' || c == 'U') && sql[j] == '&' && sql[j+1] == '\'' {
				j++ // U&'…': read as a plain literal, escapes are decoded after
			}
			if j >= n || sql[j] != '\'' {
				i = j
				continue
			}
			// A one-letter word right before a quote is the literal's
			// prefix; any longer word is a name (a type: date'…').
			var end int
			var ok bool
			switch prefix := sql[i:j]; prefix {
			case "e", "E":
				end, ok = stringEnd(sql, j+1, true)
			case "b", "B", "x", "X":
				// Nothing escapes in a bit string; a doubled quote ends it.
				k := strings.IndexByte(sql[j+1:], '\'')
				if k < 0 {
					return false
				}
				i = j + 1 + k + 1
				if !literalEnds(sql, i) {
					return false
				}
				continue
			default:
				end, ok = stringEnd(sql, j+1, false)
			}
			if !ok {
				return false
			}
			found(j+1, end)
			i = end + 1
		case c >= '0' && c <= '9':
			j := i + 1
			for j < n && (identCont(sql[j]) && sql[j] != '$' || sql[j] == '.') {
				j++
			}
			if j < n && (sql[j] == '\'' || sql[j] == '$') {
				return false // 1e'…' is 1 then E'…': PostgreSQL versions differ on such junk
			}
			i = j
		case c == '"':
			j := strings.IndexByte(sql[i+1:], '"')
			if j < 0 {
				return false
			}
			i += j + 2 // a doubled "" is two quoted identifiers back to back: same effect
		case c == '-' && i+1 < n && sql[i+1] == '-':
			i = lineCommentEnd(sql, i)
		case c == '/' && i+1 < n && sql[i+1] == '*':
			return false // rare in generated SQL; nested comments are not worth the risk
		case c == '$':
			end, ok := endOfDollar(sql, i)
			if !ok {
				return false
			}
			i = end
		default:
			i++
		}
	}
	return true
}

// stringEnd returns the index of the quote closing a literal whose
// content starts at i. In an E'…' string a backslash escapes the next
// byte; in any, a doubled quote stands for one. ok is false when the
// literal is not closed, or is followed by another quote (after spaces
// and line comments), which may continue it.
func stringEnd(sql string, i int, escapes bool) (int, bool) {
	for i < len(sql) {
		// Jump to the next quote: literals are long, and IndexByte reads
		// many bytes per step.
		q := strings.IndexByte(sql[i:], '\'')
		if q < 0 {
			return 0, false
		}
		if escapes {
			if b := strings.IndexByte(sql[i:i+q], '\\'); b >= 0 {
				i += b + 2 // the escaped byte may be a quote
				continue
			}
		}
		i += q
		if i+1 < len(sql) && sql[i+1] == '\'' {
			i += 2
			continue
		}
		return i, literalEnds(sql, i+1)
	}
	return 0, false
}

// literalEnds reports whether a literal closed before i ends there: no
// quote follows after spaces and line comments. PostgreSQL continues a
// literal with one that follows it across a newline ('a'\n'b' is 'ab').
func literalEnds(sql string, i int) bool {
	for i < len(sql) {
		switch c := sql[i]; {
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\f', c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			i = lineCommentEnd(sql, i)
		default:
			return c != '\''
		}
	}
	return true
}

// lineCommentEnd returns the index after the -- comment starting at i,
// which ends at a newline, \n or \r (scan.l, comment).
func lineCommentEnd(sql string, i int) int {
	j := strings.IndexAny(sql[i:], "\n\r")
	if j < 0 {
		return len(sql)
	}
	return i + j + 1
}

// endOfDollar returns the index after a parameter ($1) or a $tag$…$tag$
// literal starting at i; ok is false for any other $, which PostgreSQL
// reads as an error or as a character of an operator.
func endOfDollar(sql string, i int) (int, bool) {
	j := i + 1
	if j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		return j, true
	}
	if j < len(sql) && identStart(sql[j]) {
		for j < len(sql) && identCont(sql[j]) && sql[j] != '$' {
			j++
		}
	}
	if j >= len(sql) || sql[j] != '$' {
		return 0, false
	}
	tag := sql[i : j+1]
	k := strings.Index(sql[j+1:], tag)
	if k < 0 {
		return 0, false
	}
	return j + 1 + k + len(tag), true
}

// identStart and identCont are the bytes that start and continue an
// identifier (scan.l: ident_start, ident_cont); a dollar-quote tag is
// made of the same, without $.
func identStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func identCont(c byte) bool { return identStart(c) || c >= '0' && c <= '9' || c == '$' }

// numberArray reports whether s holds only what vector and number-array
// literals are made of, so that eliding it can hide no quote or subject.
func numberArray(s string) bool {
	for i := 0; i < len(s); i++ {
		if !numberArrayByte[s[i]] {
			return false
		}
	}
	return true
}

var numberArrayByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789.,-+eE[]{} \n\t\r") {
		t[c] = true
	}
	return t
}()

// restore puts the literals takeOut took out back into the values an
// analysis keeps. Each is a copy: the text it came from (a 15 KB Query)
// must not live as long as the tags made from the analysis.
func (a *Analysis) restore(literals []string) {
	a.fill(func(v *value) {
		if v.kind != valConst || !strings.HasPrefix(v.text, placeholderPrefix) {
			return
		}
		if i, err := strconv.Atoi(v.text[len(placeholderPrefix):]); err == nil && i < len(literals) {
			v.text = strings.Clone(literals[i])
		}
	})
}

// fill calls fix with each value an analysis keeps from its statement.
func (a *Analysis) fill(fix func(*value)) {
	for i := range a.rows {
		fix(&a.rows[i].id)
		for j := range a.rows[i].cols {
			fix(&a.rows[i].cols[j])
		}
	}
	for i := range a.sets {
		fix(&a.sets[i])
	}
	for i := range a.ids {
		fix(&a.ids[i].v)
	}
}
