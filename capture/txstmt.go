package capture

import (
	"strings"
	"unicode"
)

// txKind classifies a statement by its effect on the transaction.
type txKind uint8

const (
	txNone        txKind = iota // any other statement
	txBegin                     // BEGIN, START TRANSACTION
	txCommit                    // COMMIT, END (answers ROLLBACK when the block had failed)
	txRollback                  // ROLLBACK, ABORT
	txSavepoint                 // SAVEPOINT name
	txRelease                   // RELEASE [SAVEPOINT] name
	txRollbackTo                // ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name
	txPrepare                   // PREPARE TRANSACTION 'gid': the outcome is decided later, elsewhere
	txEndPrepared               // COMMIT PREPARED / ROLLBACK PREPARED: ends some other, prepared transaction
)

// txStatement is a classified transaction-control statement.
type txStatement struct {
	kind      txKind
	savepoint string // for SAVEPOINT, RELEASE, ROLLBACK TO
}

// classifyTx recognises transaction control in one statement's text. Those
// statements are short and fixed in form, so a small tokenizer suffices and
// no parse is spent on the many statements that are something else.
func classifyTx(sql string) txStatement {
	w := words(sql, 5)
	if len(w) == 0 {
		return txStatement{}
	}
	skip := func(i int, opt ...string) int {
		for i < len(w) {
			matched := false
			for _, o := range opt {
				if w[i] == o {
					matched = true
				}
			}
			if !matched {
				break
			}
			i++
		}
		return i
	}
	at := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	switch w[0] {
	case "begin":
		return txStatement{kind: txBegin}
	case "start":
		if at(1) == "transaction" {
			return txStatement{kind: txBegin}
		}
	case "commit", "end":
		if at(1) == "prepared" {
			return txStatement{kind: txEndPrepared}
		}
		return txStatement{kind: txCommit}
	case "abort":
		return txStatement{kind: txRollback}
	case "rollback":
		if at(1) == "prepared" {
			return txStatement{kind: txEndPrepared}
		}
		i := skip(1, "work", "transaction")
		if at(i) == "to" {
			i = skip(i+1, "savepoint")
			return txStatement{kind: txRollbackTo, savepoint: at(i)}
		}
		return txStatement{kind: txRollback}
	case "savepoint":
		return txStatement{kind: txSavepoint, savepoint: at(1)}
	case "release":
		return txStatement{kind: txRelease, savepoint: at(skip(1, "savepoint"))}
	case "prepare":
		if at(1) == "transaction" {
			return txStatement{kind: txPrepare}
		}
	}
	return txStatement{}
}

// words returns up to max leading words of sql, skipping comments: unquoted
// words lower-cased (as PostgreSQL folds identifiers), double-quoted
// identifiers verbatim. It stops at a semicolon or any other token.
func words(sql string, max int) []string {
	var out []string
	s := sql
	for len(out) < max {
		s = skipSpaceAndComments(s)
		if s == "" || s[0] == ';' {
			break
		}
		if s[0] == '"' {
			end := 1
			var b strings.Builder
			for end < len(s) {
				if s[end] == '"' {
					if end+1 < len(s) && s[end+1] == '"' {
						b.WriteByte('"')
						end += 2
						continue
					}
					break
				}
				b.WriteByte(s[end])
				end++
			}
			out = append(out, b.String())
			s = s[min(end+1, len(s)):]
			continue
		}
		end := 0
		for end < len(s) && (isIdentByte(s[end])) {
			end++
		}
		if end == 0 {
			break
		}
		out = append(out, strings.ToLower(s[:end]))
		s = s[end:]
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func skipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			depth, i := 1, 2 // PostgreSQL block comments nest
			for i < len(s) && depth > 0 {
				switch {
				case strings.HasPrefix(s[i:], "/*"):
					depth++
					i += 2
				case strings.HasPrefix(s[i:], "*/"):
					depth--
					i += 2
				default:
					i++
				}
			}
			s = s[i:]
		default:
			return s
		}
	}
}
