package extract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// textArray parses a one-dimensional array literal in PostgreSQL's text form
// ({a,"b c",NULL}); NULL elements are skipped. An optional dimension
// decoration ([1:3]={...}) is accepted.
func textArray(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, '=')
		if i < 0 {
			return nil, badValue("malformed array literal", s, "")
		}
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, badValue("malformed array literal", s, "")
	}
	body := s[1 : len(s)-1]
	var out []string
	i := 0
	for {
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		if i == len(body) {
			if len(out) == 0 {
				return nil, nil
			}
			return nil, badValue("malformed array literal", s, ": trailing comma")
		}
		var elem strings.Builder
		quoted := false
		switch body[i] {
		case '{':
			return nil, badValue("multi-dimensional array", s, ": only one-dimensional arrays are supported")
		case '"':
			quoted = true
			i++
			closed := false
			for i < len(body) {
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					elem.WriteByte(body[i+1])
					i += 2
					continue
				}
				if c == '"' {
					i++
					closed = true
					break
				}
				elem.WriteByte(c)
				i++
			}
			if !closed {
				return nil, badValue("malformed array literal", s, ": unterminated quote")
			}
		default:
			for i < len(body) && body[i] != ',' {
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					elem.WriteByte(body[i+1])
					i += 2
					continue
				}
				if c == '"' || c == '{' || c == '}' {
					return nil, badValue("malformed array literal", s, "")
				}
				elem.WriteByte(c)
				i++
			}
		}
		e := elem.String()
		if !quoted {
			e = strings.TrimRight(e, " \t\n\r\f\v")
		}
		if quoted || !strings.EqualFold(e, "NULL") {
			out = append(out, e)
		}
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		if i == len(body) {
			return out, nil
		}
		if body[i] != ',' {
			return nil, badValue("malformed array literal", s, "")
		}
		i++
	}
}

// binaryArray decodes PostgreSQL's binary array format (array_send: ndim,
// has-null flag, element type OID, then per dimension its size and lower
// bound, then each element as an int32 length, -1 for NULL, and its bytes).
// Elements of every dimension are returned in order; NULLs are skipped.
func binaryArray(b []byte, r role) ([]string, error) {
	if len(b) < 12 {
		return nil, errors.New("binary array shorter than its header")
	}
	ndim := int32(binary.BigEndian.Uint32(b))
	elem := binary.BigEndian.Uint32(b[8:])
	b = b[12:]
	if ndim < 0 || ndim > 6 {
		return nil, fmt.Errorf("binary array has %d dimensions", ndim)
	}
	total := 1
	if ndim == 0 {
		total = 0
	}
	for d := int32(0); d < ndim; d++ {
		if len(b) < 8 {
			return nil, errors.New("binary array truncated in its dimensions")
		}
		n := int32(binary.BigEndian.Uint32(b))
		b = b[8:]
		// Each element takes at least its 4-byte length, which bounds the
		// count by the bytes present before anything is allocated.
		if n < 0 || int64(total)*int64(n) > int64(len(b)/4+1) {
			return nil, errors.New("binary array claims more elements than it holds")
		}
		total *= int(n)
	}
	out := make([]string, 0, total)
	for i := 0; i < total; i++ {
		if len(b) < 4 {
			return nil, errors.New("binary array truncated")
		}
		n := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n == -1 {
			continue
		}
		if n < 0 || int(n) > len(b) {
			return nil, errors.New("binary array element length out of range")
		}
		s, err := decodeBinary(b[:n], elem, r)
		if err != nil {
			return nil, fmt.Errorf("array element %d: %w", i+1, err)
		}
		out = append(out, s)
		b = b[n:]
	}
	if len(b) != 0 {
		return nil, errors.New("binary array has trailing bytes")
	}
	return out, nil
}
