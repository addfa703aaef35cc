package extract

import (
	"bytes"
	"fmt"
	"strings"
)

// lineRows reads the complete lines in buf as rows of the text or CSV
// format. With final set, what remains without a newline is the last row.
func (d *CopyDecoder) lineRows(tags []Tag, final bool) ([]Tag, error) {
	for !d.done {
		end := d.lineEnd()
		var line []byte
		next := end + 1
		if end < 0 {
			if !final || len(d.buf) == 0 {
				return tags, nil
			}
			if d.inQuote {
				return nil, fmt.Errorf("%w: unterminated CSV quoted field", ErrCopyTruncated)
			}
			line, next = d.buf, len(d.buf)
		} else {
			line = d.buf[:end]
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		var err error
		switch {
		case string(line) == `\.`:
			// The end-of-data marker a client may send before CopyDone.
			d.done = true
		case d.spec.header && !d.started:
			d.started = true
		default:
			d.started = true
			d.row++
			var tg Tag
			if d.spec.format == copyCSV {
				tg, err = d.csvRow(line)
			} else {
				tg, err = d.textRow(line)
			}
			if err == nil {
				tags = append(tags, tg)
			}
		}
		d.consume(next)
		if err != nil {
			return nil, err
		}
	}
	return tags, nil
}

// lineEnd finds the newline ending the first row in buf, resuming where the
// last search stopped; -1 if the row is incomplete. In text format a
// backslash escapes the byte after it (even a newline); in CSV a newline
// inside quotes belongs to the field.
func (d *CopyDecoder) lineEnd() int {
	b := d.buf
	i := d.scan
	s := d.spec
	for i < len(b) {
		c := b[i]
		if s.format == copyText {
			if c == '\\' {
				if i+1 >= len(b) {
					break // the escaped byte has not arrived yet
				}
				i += 2
				continue
			}
			if c == '\n' {
				return i
			}
			i++
			continue
		}
		if d.inQuote {
			if c == s.escape && s.escape != s.quote && i+1 < len(b) {
				if n := b[i+1]; n == s.quote || n == s.escape {
					i += 2
					continue
				}
			} else if c == s.escape && s.escape != s.quote {
				break // wait for the byte after the escape
			}
			if c == s.quote {
				d.inQuote = false
			}
		} else if c == s.quote {
			d.inQuote = true
		} else if c == '\n' {
			return i
		}
		i++
	}
	d.scan = i
	return -1
}

// textRow decodes one line of the text format.
func (d *CopyDecoder) textRow(line []byte) (Tag, error) {
	s := d.spec
	d.resetRow()
	id := ""
	field := 0
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] != s.delim {
				continue
			}
		}
		end := min(i, len(line))
		if field >= s.nfields {
			return Tag{}, fmt.Errorf("extract: COPY row %d has more than %d fields", d.row, s.nfields)
		}
		if dst := s.dest[field]; dst != -2 {
			raw := line[start:end]
			if string(raw) != s.null {
				v := unescapeText(raw)
				if dst == -1 {
					id = v
				} else {
					d.vals[dst], d.present[dst] = v, true
				}
			}
		}
		field++
		start = i + 1
	}
	if field != s.nfields {
		return Tag{}, fmt.Errorf("extract: COPY row %d has %d fields, want %d", d.row, field, s.nfields)
	}
	return d.tag(id)
}

// unescapeText undoes the text format's backslash escapes (\b \f \n \r \t
// \v, octal \NNN, hex \xHH, and \c for any other c).
func unescapeText(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 == len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		c = raw[i]
		switch c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(raw) && isHex(raw[i+1]) {
				v = v<<4 | hexVal(raw[i+1])
				i++
				n++
			}
			if n == 0 {
				b.WriteByte('x')
			} else {
				b.WriteByte(byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 1; n < 3 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; n++ {
				v = v<<3 | int(raw[i+1]-'0')
				i++
			}
			b.WriteByte(byte(v))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// csvRow decodes one row of the CSV format (which may span lines inside
// quotes). An unquoted field equal to the NULL string is NULL; a quoted one
// never is.
func (d *CopyDecoder) csvRow(line []byte) (Tag, error) {
	s := d.spec
	d.resetRow()
	id := ""
	field := 0
	i := 0
	for {
		var val strings.Builder
		quoted := false
		rawStart := i
		for i < len(line) && line[i] != s.delim {
			c := line[i]
			if c != s.quote {
				val.WriteByte(c)
				i++
				continue
			}
			quoted = true
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == s.escape && i+1 < len(line) && (line[i+1] == s.quote || line[i+1] == s.escape) && (s.escape != s.quote || line[i+1] == s.quote) {
					val.WriteByte(line[i+1])
					i += 2
					continue
				}
				if c == s.quote {
					i++
					closed = true
					break
				}
				val.WriteByte(c)
				i++
			}
			if !closed {
				return Tag{}, fmt.Errorf("extract: COPY row %d: unterminated CSV quoted field", d.row)
			}
		}
		if field >= s.nfields {
			return Tag{}, fmt.Errorf("extract: COPY row %d has more than %d fields", d.row, s.nfields)
		}
		if dst := s.dest[field]; dst != -2 {
			if quoted || string(line[rawStart:i]) != s.null {
				v := val.String()
				if dst == -1 {
					id = v
				} else {
					d.vals[dst], d.present[dst] = v, true
				}
			}
		}
		field++
		if i >= len(line) {
			break
		}
		i++ // the delimiter
	}
	if field != s.nfields {
		return Tag{}, fmt.Errorf("extract: COPY row %d has %d fields, want %d", d.row, field, s.nfields)
	}
	return d.tag(id)
}
