package strictjson

// quoted checks the string whose '"' is at Doc[i] as encoding/json does:
// no control characters, only JSON's escapes; other bytes, valid UTF-8 or
// not, are accepted. It returns the index just past the closing quote.
func (w *Walker) quoted(i int) int {
	d := w.Doc
	for i++; i < len(d); i++ {
		b := d[i]
		if !stringStop[b] {
			continue
		}
		switch {
		case b == '"':
			return i + 1
		case b < 0x20:
			return w.fail(i, "control character in a string")
		}
		i++ // a backslash
		switch w.Byte(i) {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			for k := 1; k <= 4; k++ {
				if !isHexDigit(w.Byte(i + k)) {
					return w.fail(i+k, "bad \\u escape in a string")
				}
			}
			i += 4
		default:
			return w.fail(i, "bad escape in a string")
		}
	}
	return w.fail(i, "unterminated string")
}

// stringStop marks the bytes quoted stops at: the quote, the backslash and
// the control characters, which no string may hold unescaped.
var stringStop = func() (stop [256]bool) {
	for b := range stop {
		stop[b] = b < 0x20 || b == '"' || b == '\\'
	}
	return stop
}()

// number checks the number at Doc[i] and returns the index just past it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *Walker) number(i int) int {
	d := w.Doc
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch b := w.Byte(i); {
	case b == '0':
		i++
	case b >= '1' && b <= '9':
		i = skipDigits(d, i+1)
	default:
		return w.fail(i, "expected a digit in a number")
	}
	if i < len(d) && d[i] == '.' {
		if i++; !isDigit(w.Byte(i)) {
			return w.fail(i, "expected a digit after '.' in a number")
		}
		i = skipDigits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !isDigit(w.Byte(i)) {
			return w.fail(i, "expected a digit in a number's exponent")
		}
		i = skipDigits(d, i+1)
	}
	return i
}

// numbers checks array elements from the number at Doc[i] on, as long as
// they are numbers separated by a bare ','; it returns as NextElement does.
// It is number and NextElement in one loop: this is where nearly all the
// bytes of a vector upsert are.
func (w *Walker) numbers(i int) (int, bool) {
	d := w.Doc
	for {
		if i < len(d) && d[i] == '-' {
			i++
		}
		switch {
		case i < len(d) && d[i] == '0':
			i++
		case i < len(d) && d[i]-'1' < 9:
			for i++; i < len(d) && isDigit(d[i]); i++ {
			}
		default:
			return w.fail(i, "expected a digit in a number"), false
		}
		if i < len(d) && d[i] == '.' {
			i++
			frac := i
			for i < len(d) && isDigit(d[i]) {
				i++
			}
			if i == frac {
				return w.fail(i, "expected a digit after '.' in a number"), false
			}
		}
		if i < len(d) && d[i]|0x20 == 'e' {
			if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
				i++
			}
			exp := i
			for i < len(d) && isDigit(d[i]) {
				i++
			}
			if i == exp {
				return w.fail(i, "expected a digit in a number's exponent"), false
			}
		}
		if i < len(d) && d[i] == ',' {
			i++
			if i < len(d) && (d[i] == '-' || isDigit(d[i])) {
				continue
			}
			return w.Space(i), true
		}
		return w.next(i, ']')
	}
}

func (w *Walker) literal(i int, lit string) int {
	if len(w.Doc)-i < len(lit) || w.Doc[i:i+len(lit)] != lit {
		return w.fail(i, "expected "+lit)
	}
	return i + len(lit)
}

func skipDigits(d string, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

func isDigit(b byte) bool { return b-'0' < 10 }

func isHexDigit(b byte) bool {
	return isDigit(b) || b|0x20 >= 'a' && b|0x20 <= 'f'
}
