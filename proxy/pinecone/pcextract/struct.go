package pcextract

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Metadata in the gRPC API is a google.protobuf.Struct
// {fields=1 map<string, Value>}; a map entry is {key=1 string, value=2
// Value}; Value is a oneof {null_value=1, number_value=2 double,
// string_value=3, bool_value=4, struct_value=5, list_value=6 ListValue
// {values=1 repeated Value}}.
//
// Subjects are read as views: slices of the message's own bytes (a
// number's JSON text form is the one that is not), valid UTF-8, which the
// caller copies into strings once per request (see UpsertGRPC).

// structSubjectsNamed returns the subjects held in fields of the Struct msg
// and whether it has an entry for any of fields. A subject field with two
// entries is an error (see once).
func structSubjectsNamed(msg []byte, fields []string) (subjects []string, named bool, err error) {
	views, named, err := structSubjectViews(msg, fields, nil, -1)
	if err != nil || len(views) == 0 {
		return nil, named, err
	}
	subjects = make([]string, len(views))
	for i, v := range views {
		subjects[i] = string(v)
	}
	return subjects, named, nil
}

// structSubjectViews appends to dst the subjects held in fields of the
// Struct msg, in the order of fields, and reports whether it has an entry
// for any of fields. With depth ≥ 0 (the Struct's depth in its request) it
// also checks every entry's Value as checkWire does, so that a caller's
// one walk over a request covers what checkWire would; with depth < 0 the
// caller has run checkWire itself.
func structSubjectViews(msg []byte, fields []string, dst [][]byte, depth int) (_ [][]byte, named bool, err error) {
	// One pass checks the entries' framing and remembers the last value
	// of each subject field; most structs have one or two subject fields.
	var lastSmall [4][]byte
	var seenSmall [4]bool
	var last [][]byte
	var seen []bool
	if len(fields) <= len(lastSmall) {
		last, seen = lastSmall[:len(fields)], seenSmall[:len(fields)]
	} else {
		last, seen = make([][]byte, len(fields)), make([]bool, len(fields))
	}
	p := protoFields{b: msg}
	for n := 0; ; n++ {
		num, typ, entry, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue
		}
		if typ != protowire.BytesType {
			return dst, false, fmt.Errorf("fields entry %d: %w", n, errWireType)
		}
		key, value, err := structEntry(entry)
		if err != nil {
			return dst, false, fmt.Errorf("fields entry %d: %w", n, err)
		}
		if depth >= 0 { // the entry is at depth+1, its Value at depth+2
			if err := checkWire(value, &wireValue, depth+2); err != nil {
				return dst, false, fmt.Errorf("fields entry %d: value: %w", n, err)
			}
		}
		for i, f := range fields {
			if string(key) != f { // compared without a copy
				continue
			}
			if seen[i] {
				return dst, false, fmt.Errorf("subject field %d appears more than once (a protobuf map keeps the last entry; Lethe refuses repeats)", i+1)
			}
			last[i], seen[i] = value, true
		}
	}
	if p.err != nil {
		return dst, false, p.err
	}
	for i := range fields {
		if !seen[i] {
			continue
		}
		named = true
		if dst, err = appendValueSubjects(dst, last[i], true); err != nil {
			return dst, false, fmt.Errorf("value of subject field %d: %w", i+1, err)
		}
	}
	return dst, named, nil
}

// structEntry reads a map entry {key=1 string, value=2 Value}.
func structEntry(msg []byte) (key, value []byte, err error) {
	hasKey, hasValue := false, false
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := once(&hasKey, typ, protowire.BytesType, "key"); err != nil {
				return nil, nil, err
			}
			key = val
		case 2:
			if err := once(&hasValue, typ, protowire.BytesType, "value"); err != nil {
				return nil, nil, err
			}
			value = val
		}
	}
	return key, value, p.err
}

// appendValueSubjects appends the subjects of a google.protobuf.Value
// {null_value=1, number_value=2, string_value=3, bool_value=4,
// struct_value=5, list_value=6}: a string, a number in JSON text form, and
// (when top is true) each string of a list.
func appendValueSubjects(dst [][]byte, msg []byte, top bool) ([][]byte, error) {
	// A oneof holds one field; several (which a parser would merge or
	// let the last win) are refused, as repeats are (see once).
	var kind protowire.Number
	var kindVal []byte
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		var err error
		switch num {
		case 1, 4:
			err = wantType(typ, protowire.VarintType, "value kind")
		case 2:
			err = wantType(typ, protowire.Fixed64Type, "number_value")
		case 3, 5, 6:
			err = wantType(typ, protowire.BytesType, "value kind")
		default:
			continue
		}
		if err != nil {
			return dst, err
		}
		if kind != 0 {
			return dst, errors.New("a Value holds more than one kind")
		}
		kind, kindVal = num, val
	}
	if p.err != nil {
		return dst, p.err
	}
	switch kind {
	case 2:
		bits, _ := protowire.ConsumeFixed64(kindVal)
		if s, ok := NumberSubject(math.Float64frombits(bits)); ok && top {
			dst = append(dst, []byte(s))
		}
	case 3:
		if !utf8.Valid(kindVal) {
			return dst, fmt.Errorf("string_value %w", errNotUTF8)
		}
		dst = append(dst, kindVal)
	case 6:
		if !top {
			return dst, nil // a list in a list holds no subjects
		}
		l := protoFields{b: kindVal}
		for n := 0; ; n++ {
			num, typ, val, ok := l.next()
			if !ok {
				break
			}
			if num != 1 {
				continue
			}
			if typ != protowire.BytesType {
				return dst, fmt.Errorf("list element %d: %w", n, errWireType)
			}
			var err error
			if dst, err = appendValueSubjects(dst, val, false); err != nil {
				return dst, fmt.Errorf("list element %d: %w", n, err)
			}
		}
		if l.err != nil {
			return dst, l.err
		}
	}
	return dst, nil
}
