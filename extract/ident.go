package extract

import (
	"fmt"
	"strings"
)

// splitIdentifiers splits a comma- or dot-separated list of SQL identifiers
// the way PostgreSQL's SplitIdentifierString does: unquoted names fold to
// lower case, double-quoted names keep their case and "" stands for one
// quote. It is used for configured table names and set_config values, which
// arrive as plain strings rather than through the SQL parser.
func splitIdentifiers(s string, sep byte) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		var name strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						name.WriteByte('"')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				name.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quoted identifier in %q", s)
			}
		} else {
			start := i
			for i < len(s) && s[i] != sep && !isSpace(s[i]) {
				i++
			}
			name.WriteString(strings.ToLower(s[start:i]))
		}
		if name.Len() == 0 {
			return nil, fmt.Errorf("empty identifier in %q", s)
		}
		out = append(out, name.String())
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		if s[i] != sep {
			return nil, fmt.Errorf("unexpected %q in identifier list %q", s[i], s)
		}
		i++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
