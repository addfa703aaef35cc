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
	elideMinText    = 64 << 10
	elideMinLiteral = 512
)

// elisions maps placeholders to the literal texts they replace.
type elisions map[string]string

// elide returns sql with long number-array literals replaced, and the map
// to restore them; ok is false when nothing was elided (or the text could
// not be scanned with certainty), and the caller parses sql as it is.
func elide(sql string) (string, elisions, bool) {
	if len(sql) < elideMinText || strings.Contains(sql, "lethe_elided_") {
		return sql, nil, false
	}
	var b strings.Builder
	out := elisions{}
	last := 0 // sql[last:] is not yet copied to b
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'':
			start := i + 1
			end, ok := endOfStandardString(sql, start, i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e'))
			if !ok {
				return sql, nil, false
			}
			if end-start >= elideMinLiteral && numberArray(sql[start:end]) {
				if b.Len() == 0 {
					b.Grow(len(sql) / 4)
				}
				ph := "lethe_elided_" + strconv.Itoa(len(out))
				out[ph] = sql[start:end]
				b.WriteString(sql[last:start])
				b.WriteString(ph)
				last = end
			}
			i = end + 1
		case c == '"':
			j := strings.IndexByte(sql[i+1:], '"')
			if j < 0 {
				return sql, nil, false
			}
			i += j + 2 // a doubled "" is two quoted identifiers back to back: same effect
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				i = len(sql)
			} else {
				i += j + 1
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			return sql, nil, false // rare in generated SQL; nested comments are not worth the risk
		case c == '$':
			end, ok := endOfDollarQuote(sql, i)
			if !ok {
				return sql, nil, false
			}
			i = end
		default:
			i++
		}
	}
	if len(out) == 0 {
		return sql, nil, false
	}
	b.WriteString(sql[last:])
	return b.String(), out, true
}

// endOfStandardString returns the index of the quote closing a literal
// whose content starts at i. In an E” string a backslash escapes the
// next byte; otherwise (standard_conforming_strings, PostgreSQL's default)
// only a doubled quote does.
func endOfStandardString(sql string, i int, escapes bool) (int, bool) {
	for i < len(sql) {
		switch sql[i] {
		case '\\':
			if escapes {
				i += 2
				continue
			}
		case '\'':
			if i+1 < len(sql) && sql[i+1] == '\'' {
				i += 2
				continue
			}
			return i, true
		}
		i++
	}
	return 0, false
}

// endOfDollarQuote returns the index after a $tag$…$tag$ literal starting
// at i, or i+1 when the $ starts no dollar quote ($1 parameters).
func endOfDollarQuote(sql string, i int) (int, bool) {
	j := i + 1
	for j < len(sql) && (sql[j] == '_' || sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' || sql[j] >= '0' && sql[j] <= '9' && j > i+1) {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i + 1, true // a parameter ($1) or a $ inside an identifier
	}
	if i > 0 && isIdentChar(sql[i-1]) {
		return i + 1, true // inside an identifier such as a$b
	}
	tag := sql[i : j+1]
	k := strings.Index(sql[j+1:], tag)
	if k < 0 {
		return 0, false
	}
	return j + 1 + k + len(tag), true
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// numberArray reports whether s holds only what vector and number-array
// literals are made of, so that eliding it can hide no quote or subject.
func numberArray(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == ',', c == '-', c == '+', c == 'e', c == 'E',
			c == '[', c == ']', c == '{', c == '}', c == ' ', c == '\n', c == '\t', c == '\r':
		default:
			return false
		}
	}
	return true
}

// restore puts elided literal texts back into the values an analysis keeps.
func (a *Analysis) restore(e elisions) {
	fix := func(v *value) {
		if v.kind == valConst {
			if orig, ok := e[v.text]; ok {
				v.text = orig
			}
		}
	}
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
