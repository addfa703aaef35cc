package extract

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The Pinecone gRPC data plane's write messages (service VectorService, no
// proto package; field numbers in FACTS.md, "Pinecone data plane"). The
// functions take one message's bytes, without gRPC's 5-byte frame prefix.
// Messages are walked field by field; values and sparse values (fields 2, 4
// of Vector; 2, 5 of UpdateRequest) are stepped over as length-delimited
// bytes, never read as floats.

// protoFields steps through the fields of one protobuf message.
type protoFields struct {
	b   []byte
	err error
}

// next returns the next field. For length-delimited fields val is the
// content; for the others it is the encoded value (a varint, 4 or 8 bytes).
// At the end, or on malformed input, ok is false; err says which.
func (p *protoFields) next() (num protowire.Number, typ protowire.Type, val []byte, ok bool) {
	if len(p.b) == 0 || p.err != nil {
		return 0, 0, nil, false
	}
	num, typ, n := protowire.ConsumeTag(p.b)
	if n < 0 {
		p.err = protowire.ParseError(n)
		return 0, 0, nil, false
	}
	p.b = p.b[n:]
	if typ == protowire.BytesType {
		val, n = protowire.ConsumeBytes(p.b)
	} else {
		n = protowire.ConsumeFieldValue(num, typ, p.b)
		if n >= 0 {
			val = p.b[:n]
		}
	}
	if n < 0 {
		p.err = protowire.ParseError(n)
		return 0, 0, nil, false
	}
	p.b = p.b[n:]
	return num, typ, val, true
}

var errWireType = errors.New("wrong wire type")

// want checks a known field's wire type.
func wantType(typ, want protowire.Type, field string) error {
	if typ != want {
		return fmt.Errorf("%s: %w", field, errWireType)
	}
	return nil
}

// UpsertGRPC tags an UpsertRequest{vectors=1 Vector, namespace=2}: one
// OpWrite per vector.
func (r *PineconeRules) UpsertGRPC(msg []byte) ([]Tag, error) {
	ns := DefaultNamespace
	count := 0
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := wantType(typ, protowire.BytesType, "vectors"); err != nil {
				return nil, grpcErr("upsert", err)
			}
			count++
		case 2:
			if err := wantType(typ, protowire.BytesType, "namespace"); err != nil {
				return nil, grpcErr("upsert", err)
			}
			ns = canonicalNamespace(string(val))
		}
	}
	if p.err != nil {
		return nil, grpcErr("upsert", p.err)
	}
	fields, covered := r.fields(ns)
	if !covered || count == 0 {
		return nil, nil
	}
	table := r.table(ns)
	tags := make([]Tag, 0, count)
	p = protoFields{b: msg}
	for n := 0; ; {
		num, _, val, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue
		}
		t, err := vectorTag(val, fields)
		if err != nil {
			return nil, grpcErr("upsert", fmt.Errorf("vectors[%d]: %w", n, err))
		}
		t.Table = table
		tags = append(tags, t)
		n++
	}
	return tags, nil
}

// vectorTag reads Vector{id=1, values=2, metadata=3, sparse_values=4}.
func vectorTag(msg []byte, fields []string) (Tag, error) {
	var id, meta []byte
	hasID := false
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := wantType(typ, protowire.BytesType, "id"); err != nil {
				return Tag{}, err
			}
			id, hasID = val, true
		case 3:
			if err := wantType(typ, protowire.BytesType, "metadata"); err != nil {
				return Tag{}, err
			}
			meta = val
		}
	}
	if p.err != nil {
		return Tag{}, p.err
	}
	if !hasID || len(id) == 0 {
		return Tag{}, errors.New("no id")
	}
	subjects, err := structSubjects(meta, fields, nil)
	if err != nil {
		return Tag{}, fmt.Errorf("metadata: %w", err)
	}
	return Tag{Op: OpWrite, ID: string(id), Subjects: subjects}, nil
}

// UpdateGRPC tags an UpdateRequest{id=1, values=2, set_metadata=3,
// namespace=4, sparse_values=5, filter=6, dry_run=7}: see PineconeRules for
// what an update yields.
func (r *PineconeRules) UpdateGRPC(msg []byte) ([]Tag, error) {
	var id, set []byte
	hasSet, dryRun := false, false
	ns := DefaultNamespace
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		var err error
		switch num {
		case 1:
			err = wantType(typ, protowire.BytesType, "id")
			id = val
		case 3:
			err = wantType(typ, protowire.BytesType, "set_metadata")
			set, hasSet = val, true
		case 4:
			err = wantType(typ, protowire.BytesType, "namespace")
			ns = canonicalNamespace(string(val))
		case 6:
			err = wantType(typ, protowire.BytesType, "filter")
		case 7:
			if err = wantType(typ, protowire.VarintType, "dry_run"); err == nil {
				v, _ := protowire.ConsumeVarint(val)
				dryRun = v != 0
			}
		}
		if err != nil {
			return nil, grpcErr("update", err)
		}
	}
	if p.err != nil {
		return nil, grpcErr("update", p.err)
	}
	fields, covered := r.fields(ns)
	if !covered || dryRun || !hasSet {
		return nil, nil
	}
	subjects, named, err := structSubjectsNamed(set, fields)
	if err != nil {
		return nil, grpcErr("update", fmt.Errorf("set_metadata: %w", err))
	}
	if !named {
		return nil, nil
	}
	if len(id) == 0 {
		return []Tag{r.unattributedUpdate(ns, fields)}, nil
	}
	return []Tag{{Table: r.table(ns), Op: OpWrite, ID: string(id), Subjects: subjects}}, nil
}

// DeleteGRPC tags a DeleteRequest{ids=1, delete_all=2, namespace=3,
// filter=4}: one OpDelete per id. Deletes of all records or by filter yield
// nothing (see PineconeRules).
func (r *PineconeRules) DeleteGRPC(msg []byte) ([]Tag, error) {
	ns := DefaultNamespace
	count := 0
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		var err error
		switch num {
		case 1:
			err = wantType(typ, protowire.BytesType, "ids")
			count++
		case 2:
			err = wantType(typ, protowire.VarintType, "delete_all")
		case 3:
			err = wantType(typ, protowire.BytesType, "namespace")
			ns = canonicalNamespace(string(val))
		case 4:
			err = wantType(typ, protowire.BytesType, "filter")
		}
		if err != nil {
			return nil, grpcErr("delete", err)
		}
	}
	if p.err != nil {
		return nil, grpcErr("delete", p.err)
	}
	if _, covered := r.fields(ns); !covered || count == 0 {
		return nil, nil
	}
	table := r.table(ns)
	tags := make([]Tag, 0, count)
	p = protoFields{b: msg}
	for {
		num, _, val, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue
		}
		if len(val) == 0 {
			return nil, grpcErr("delete", fmt.Errorf("ids[%d] is empty", len(tags)))
		}
		tags = append(tags, Tag{Table: table, Op: OpDelete, ID: string(val)})
	}
	return tags, nil
}

func grpcErr(op string, err error) error {
	return fmt.Errorf("extract: pinecone gRPC %s request is malformed: %w", op, err)
}

// structSubjects appends the subjects held in fields of the
// google.protobuf.Struct msg{fields=1 map<string, Value>}.
func structSubjects(msg []byte, fields []string, dst []string) ([]string, error) {
	subjects, _, err := structSubjectsNamed(msg, fields)
	return append(dst, subjects...), err
}

// structSubjectsNamed returns the subjects held in fields of the Struct msg
// and whether it has an entry for any of fields. As in a protobuf map, the
// last entry for a key counts.
func structSubjectsNamed(msg []byte, fields []string) (subjects []string, named bool, err error) {
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
			return nil, false, fmt.Errorf("fields entry %d: %w", n, errWireType)
		}
		key, value, err := structEntry(entry)
		if err != nil {
			return nil, false, fmt.Errorf("fields entry %d: %w", n, err)
		}
		for i, f := range fields {
			if string(key) == f { // compared without a copy
				last[i], seen[i] = value, true
			}
		}
	}
	if p.err != nil {
		return nil, false, p.err
	}
	for i := range fields {
		if !seen[i] {
			continue
		}
		named = true
		if subjects, err = appendValueSubjects(subjects, last[i], true); err != nil {
			return nil, false, fmt.Errorf("value of subject field %d: %w", i+1, err)
		}
	}
	return subjects, named, nil
}

// structEntry reads a map entry {key=1 string, value=2 Value}.
func structEntry(msg []byte) (key, value []byte, err error) {
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := wantType(typ, protowire.BytesType, "key"); err != nil {
				return nil, nil, err
			}
			key = val
		case 2:
			if err := wantType(typ, protowire.BytesType, "value"); err != nil {
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
func appendValueSubjects(dst []string, msg []byte, top bool) ([]string, error) {
	// The oneof's last field on the wire is its value.
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
		kind, kindVal = num, val
	}
	if p.err != nil {
		return dst, p.err
	}
	switch kind {
	case 2:
		bits, _ := protowire.ConsumeFixed64(kindVal)
		if s, ok := formatSubjectNumber(math.Float64frombits(bits)); ok && top {
			dst = append(dst, s)
		}
	case 3:
		dst = append(dst, string(kindVal))
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
