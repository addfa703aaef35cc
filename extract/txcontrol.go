package extract

import (
	"strings"
	"unicode"
)

// TxKind classifies a statement by its effect on the transaction.
type TxKind uint8

const (
	TxNone        TxKind = iota // any other statement
	TxBegin                     // BEGIN, START TRANSACTION
	TxCommit                    // COMMIT, END (answers ROLLBACK when the block had failed)
	TxRollback                  // ROLLBACK, ABORT
	TxSavepoint                 // SAVEPOINT name
	TxRelease                   // RELEASE [SAVEPOINT] name
	TxRollbackTo                // ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name
	TxPrepare                   // PREPARE TRANSACTION 'gid': the outcome is decided later, elsewhere
	TxEndPrepared               // COMMIT PREPARED / ROLLBACK PREPARED: ends some other, prepared transaction
)

// TxControl is a classified transaction-control statement.
type TxControl struct {
	Kind      TxKind
	Savepoint string // for SAVEPOINT, RELEASE, ROLLBACK TO
	// Chain: COMMIT AND CHAIN or ROLLBACK AND CHAIN, which start a new
	// transaction block at once.
	Chain bool
}

// ClassifyTx recognises transaction control in one statement's text. Those
// statements are short and fixed in form, so a small tokenizer suffices and
// no parse is spent on the many statements that are something else, which
// a look at the first word (no allocation) turns away.
func ClassifyTx(sql string) TxControl {
	if !firstWordIs(sql, "begin", "start", "commit", "end", "abort", "rollback", "savepoint", "release", "prepare") {
		return TxControl{}
	}
	w := words(sql, 5)
	if len(w) == 0 {
		return TxControl{}
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
		return TxControl{Kind: TxBegin}
	case "start":
		if at(1) == "transaction" {
			return TxControl{Kind: TxBegin}
		}
	case "commit", "end":
		if at(1) == "prepared" {
			return TxControl{Kind: TxEndPrepared}
		}
		i := skip(1, "work", "transaction")
		return TxControl{Kind: TxCommit, Chain: at(i) == "and" && at(i+1) == "chain"}
	case "abort":
		i := skip(1, "work", "transaction")
		return TxControl{Kind: TxRollback, Chain: at(i) == "and" && at(i+1) == "chain"}
	case "rollback":
		if at(1) == "prepared" {
			return TxControl{Kind: TxEndPrepared}
		}
		i := skip(1, "work", "transaction")
		if at(i) == "to" {
			i = skip(i+1, "savepoint")
			return TxControl{Kind: TxRollbackTo, Savepoint: at(i)}
		}
		return TxControl{Kind: TxRollback, Chain: at(i) == "and" && at(i+1) == "chain"}
	case "savepoint":
		return TxControl{Kind: TxSavepoint, Savepoint: at(1)}
	case "release":
		return TxControl{Kind: TxRelease, Savepoint: at(skip(1, "savepoint"))}
	case "prepare":
		if at(1) == "transaction" {
			return TxControl{Kind: TxPrepare}
		}
	}
	return TxControl{}
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

// firstWord returns the leading keyword of sql (letters only, as written),
// after blanks and comments, without allocating.
func firstWord(sql string) string {
	s := skipSpaceAndComments(sql)
	n := 0
	for n < len(s) && n < 16 && (s[n]|0x20 >= 'a' && s[n]|0x20 <= 'z') {
		n++
	}
	return s[:n]
}

// firstWordIs reports whether sql's first word is one of keywords, in any
// case, without allocating.
func firstWordIs(sql string, keywords ...string) bool {
	w := firstWord(sql)
	for _, k := range keywords {
		if strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}
