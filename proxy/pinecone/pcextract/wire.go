package pcextract

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Every field the schema of a gRPC write message knows, at every depth,
// must come with a wire type the schema allows. A parser that decodes by
// schema (protobufjs and its kin) reads a known field by its declared
// type whatever wire type precedes it, so a Vector's values sent as
// fixed64 are read as one float and the rest of their bytes as further
// fields, where a metadata or namespace can hide that this walk, which
// steps over fields by wire type, never sees. Repeated scalars may come
// packed or not (both are protobuf); a packed run must hold whole
// elements. Unknown fields are stepped over by wire type, as every parser
// does.

// wireMsg is the schema of one message: its known fields, indexed by
// field number (a field with no types is not known).
type wireMsg []wireField

// wireField is one known field: its name, the wire types it may take,
// when it is a message, that message's schema, and what a packed run of
// it holds when it is a repeated scalar.
type wireField struct {
	name     string
	types    []protowire.Type
	msg      *wireMsg
	packed   packedKind
	repeated bool // a repeated message: errors name its element, name[i]
}

// packedKind is what the elements of a packed repeated scalar are.
type packedKind uint8

const (
	notPacked     packedKind = iota
	packedFloats             // 4 bytes each
	packedVarints            // a varint each
)

const bytesT, varintT, fixed32T, fixed64T = protowire.BytesType, protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type

// The write messages' schemas (field numbers as in go-pinecone v5's
// generated internal/gen/db_data/grpc/db_data_2025-10.pb.go). Filters are Structs too.
var (
	wireUpsert, wireUpdate, wireDelete                       wireMsg
	wireVector, wireSparse, wireStruct, wireEntry, wireValue wireMsg
	wireList                                                 wireMsg
)

func init() {
	floats := wireField{types: []protowire.Type{bytesT, fixed32T}, packed: packedFloats}
	named := func(f wireField, name string) wireField { f.name = name; return f }
	str := func(name string) wireField { return wireField{name: name, types: []protowire.Type{bytesT}} }
	msg := func(name string, m *wireMsg) wireField {
		return wireField{name: name, types: []protowire.Type{bytesT}, msg: m}
	}
	msgs := func(name string, m *wireMsg) wireField {
		return wireField{name: name, types: []protowire.Type{bytesT}, msg: m, repeated: true}
	}
	scalar := func(name string, t protowire.Type) wireField {
		return wireField{name: name, types: []protowire.Type{t}}
	}

	wireUpsert = wireMsg{1: msgs("vectors", &wireVector), 2: str("namespace")}
	wireVector = wireMsg{1: str("id"), 2: named(floats, "values"), 3: msg("metadata", &wireStruct), 4: msg("sparse_values", &wireSparse)}
	wireSparse = wireMsg{
		1: {name: "indices", types: []protowire.Type{bytesT, varintT}, packed: packedVarints},
		2: named(floats, "values"),
	}
	wireUpdate = wireMsg{1: str("id"), 2: named(floats, "values"), 3: msg("set_metadata", &wireStruct), 4: str("namespace"),
		5: msg("sparse_values", &wireSparse), 6: msg("filter", &wireStruct), 7: scalar("dry_run", varintT)}
	wireDelete = wireMsg{1: str("ids"), 2: scalar("delete_all", varintT), 3: str("namespace"), 4: msg("filter", &wireStruct)}
	wireStruct = wireMsg{1: msgs("fields entry", &wireEntry)}
	wireEntry = wireMsg{1: str("key"), 2: msg("value", &wireValue)}
	wireValue = wireMsg{1: scalar("null_value", varintT), 2: scalar("number_value", fixed64T), 3: str("string_value"),
		4: scalar("bool_value", varintT), 5: msg("struct_value", &wireStruct), 6: msg("list_value", &wireList)}
	wireList = wireMsg{1: msgs("values", &wireValue)}
}

// maxWireDepth bounds how deep messages may nest (Pinecone's metadata is
// flat; a Struct in a Value in a Struct is already unusual).
const maxWireDepth = 32

// checkWire checks that every known field of msg, and of the messages in
// it, has a wire type the schema allows, and that packed runs hold whole
// elements. The error names the field, never a value.
func checkWire(msg []byte, schema *wireMsg, depth int) error {
	if depth > maxWireDepth {
		return fmt.Errorf("messages nest more than %d deep", maxWireDepth)
	}
	var seen [8]int // elements of each repeated message field so far, by number
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		f := schema.field(num)
		if f == nil {
			continue // unknown: stepped over by wire type
		}
		element := -1 // the element's index in a repeated field, named only in an error
		if f.repeated && num < protowire.Number(len(seen)) {
			element = seen[num]
			seen[num]++
		}
		if err := f.check(typ, val, depth, element); err != nil {
			return err
		}
	}
	return p.err
}

// field is the known field num of the message, or nil.
func (m *wireMsg) field(num protowire.Number) *wireField {
	if num < 0 || int(num) >= len(*m) || (*m)[num].types == nil {
		return nil
	}
	return &(*m)[num]
}

// check checks one occurrence of the known field f (of a message at
// depth), typ and val as protoFields.next returns them: its wire type, the
// message it holds, or its packed run. element is its index when f is
// repeated (see label).
func (f *wireField) check(typ protowire.Type, val []byte, depth, element int) error {
	allowed := false
	for _, t := range f.types {
		allowed = allowed || t == typ
	}
	if !allowed {
		return fmt.Errorf("%s: %w (%s, wire type %d)", f.label(element), errWireType, wireTypeNames[f.types[0]], typ)
	}
	switch {
	case typ != bytesT:
	case f.msg != nil:
		if err := checkWire(val, f.msg, depth+1); err != nil {
			return fmt.Errorf("%s: %w", f.label(element), err)
		}
	case f.packed == packedFloats && len(val)%4 != 0:
		return fmt.Errorf("%s: %w: %d bytes, not a whole number of 4-byte floats", f.label(element), errPackedRun, len(val))
	case f.packed == packedVarints:
		for b := val; len(b) > 0; {
			_, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return fmt.Errorf("%s: %w: it ends inside a varint", f.label(element), errPackedRun)
			}
			b = b[n:]
		}
	}
	return nil
}

// label names the field in an error: its name, and for an element of a
// repeated field (element ≥ 0) its index, as "vectors[3]".
func (f wireField) label(element int) string {
	if element < 0 {
		return f.name
	}
	return fmt.Sprintf("%s[%d]", f.name, element)
}

// errPackedRun is a packed repeated scalar whose bytes do not hold whole
// elements: a parser reads its last element from the fields after it.
var errPackedRun = errors.New("packed run of cut elements")

var wireTypeNames = map[protowire.Type]string{
	bytesT: "length-delimited expected", varintT: "varint expected", fixed32T: "fixed32 expected", fixed64T: "fixed64 expected",
}
