package extract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Params are the parameters bound to one execution, as the extended
// protocol's Parse and Bind messages carry them.
type Params struct {
	Values  [][]byte // $1 = Values[0]; a nil element is SQL NULL
	Formats []int16  // Bind's format codes: none = all text, one = all, else per parameter (0 text, 1 binary)
	Types   []uint32 // parameter type OIDs from Parse (0 = unspecified); may be shorter than Values
}

// ErrParamMissing means a statement refers to a parameter the execution did
// not bind.
var ErrParamMissing = errors.New("extract: parameter not bound")

// role is what a value is used for; it steers binary decoding when the
// client did not name the parameter's type.
type role uint8

const (
	rolePlain role = iota // a subject column read as text
	roleID                // the id column
	roleJSON              // a json/jsonb column a subject path reads into
)

func (p Params) format(i int) int16 {
	switch len(p.Formats) {
	case 0:
		return 0
	case 1:
		return p.Formats[0]
	}
	if i < len(p.Formats) {
		return p.Formats[i]
	}
	return 0
}

func (p Params) oid(i int) uint32 {
	if i < len(p.Types) {
		return p.Types[i]
	}
	return 0
}

// param returns parameter n (1-based): its bytes, whether it is binary and
// its declared type.
func (p Params) param(n int) (raw []byte, bin bool, oid uint32, err error) {
	i := n - 1
	if i < 0 || i >= len(p.Values) {
		return nil, false, 0, fmt.Errorf("%w: statement uses $%d, execution bound %d", ErrParamMissing, n, len(p.Values))
	}
	f := p.format(i)
	if f != 0 && f != 1 {
		return nil, false, 0, fmt.Errorf("extract: $%d has format code %d, want 0 or 1", n, f)
	}
	return p.Values[i], f == 1, p.oid(i), nil
}

// resolve computes the text form of v for this execution; ok is false for
// NULL, DEFAULT, an unwritten column or a value only the database knows.
// JSON values come back as JSON text.
func (p Params) resolve(v value, r role) (s string, ok bool, err error) {
	switch v.kind {
	case valConst:
		return v.text, true, nil
	case valParam:
		raw, bin, oid, err := p.param(v.param)
		if err != nil || raw == nil {
			return "", false, err
		}
		if !bin {
			return string(raw), true, nil
		}
		if oid == 0 {
			oid = v.oid
		}
		s, err := decodeBinary(raw, oid, r)
		if err != nil {
			return "", false, fmt.Errorf("extract: $%d: %w", v.param, err)
		}
		return s, true, nil
	}
	return "", false, nil
}

// decodeBinary turns one binary-format value into its text form. When oid is
// 0 (the client left the type to the server) the type is inferred from the
// destination: for ids and plain subject columns, 16 bytes that are not
// printable text are a uuid and 4 or 8 such bytes an int4 or int8, anything
// else is text; for a JSON column a leading 0x01 is jsonb's version byte.
func decodeBinary(b []byte, oid uint32, r role) (string, error) {
	if oid == 0 {
		oid = inferOID(b, r)
	}
	switch oid {
	case oidText, oidVarchar, oidBpchar, oidName, oidJSON:
		return string(b), nil
	case oidJSONB:
		if len(b) == 0 || b[0] != 1 {
			return "", errors.New("binary jsonb must start with version byte 1")
		}
		return string(b[1:]), nil
	case oidUUID:
		if len(b) != 16 {
			return "", fmt.Errorf("binary uuid has %d bytes, want 16", len(b))
		}
		return formatUUID(b), nil
	case oidInt2:
		if len(b) != 2 {
			return "", fmt.Errorf("binary int2 has %d bytes, want 2", len(b))
		}
		return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(b))), 10), nil
	case oidInt4:
		if len(b) != 4 {
			return "", fmt.Errorf("binary int4 has %d bytes, want 4", len(b))
		}
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(b))), 10), nil
	case oidInt8:
		if len(b) != 8 {
			return "", fmt.Errorf("binary int8 has %d bytes, want 8", len(b))
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10), nil
	}
	return "", fmt.Errorf("cannot read binary values of type OID %d (send it as text or as text/varchar/uuid/int/json/jsonb)", oid)
}

func inferOID(b []byte, r role) uint32 {
	if r == roleJSON {
		if len(b) > 0 && b[0] == 1 {
			return oidJSONB
		}
		return oidJSON
	}
	if printable(b) {
		return oidText
	}
	switch len(b) {
	case 16:
		return oidUUID
	case 8:
		return oidInt8
	case 4:
		return oidInt4
	case 2:
		return oidInt2
	}
	return oidText
}

// printable reports whether b is valid UTF-8 with no control characters, the
// shape of a text id as opposed to a binary uuid or integer.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func formatUUID(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}
