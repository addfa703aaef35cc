package emulator

import (
	"math"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file decodes and encodes protobuf by hand from the field numbers of
// Pinecone's public data-plane API, so the emulator shares no generated code
// with the SDKs it is tested against.

// maxStructDepth bounds nesting in metadata Structs so hostile input cannot
// exhaust the stack.
const maxStructDepth = 64

// field is one decoded field: its number, wire type and payload.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	bits  uint64 // varint, fixed32 or fixed64 payload
	bytes []byte // length-delimited payload
}

// fields splits a message into its fields, in wire order.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errorf(InvalidArgument, "invalid protobuf: bad field tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.bits, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.bits = uint64(v)
		case protowire.Fixed64Type:
			f.bits, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, errorf(InvalidArgument, "invalid protobuf: field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

func (f field) want(typ protowire.Type) error {
	if f.typ != typ {
		return errorf(InvalidArgument, "invalid protobuf: field %d has wire type %d, want %d", f.num, f.typ, typ)
	}
	return nil
}

func (f field) str() (string, error) {
	if err := f.want(protowire.BytesType); err != nil {
		return "", err
	}
	if !utf8.Valid(f.bytes) {
		return "", errorf(InvalidArgument, "invalid protobuf: field %d is not valid UTF-8", f.num)
	}
	return string(f.bytes), nil
}

func (f field) boolean() (bool, error) {
	if err := f.want(protowire.VarintType); err != nil {
		return false, err
	}
	return f.bits != 0, nil
}

func (f field) uint32() (uint32, error) {
	if err := f.want(protowire.VarintType); err != nil {
		return 0, err
	}
	return uint32(f.bits), nil
}

// appendFloats adds a repeated float field, packed or not, to dst.
func (f field) appendFloats(dst []float32) ([]float32, error) {
	switch f.typ {
	case protowire.Fixed32Type:
		return append(dst, math.Float32frombits(uint32(f.bits))), nil
	case protowire.BytesType:
		if len(f.bytes)%4 != 0 {
			return nil, errorf(InvalidArgument, "invalid protobuf: packed floats in field %d are %d bytes, not a multiple of 4", f.num, len(f.bytes))
		}
		for b := f.bytes; len(b) > 0; b = b[4:] {
			v, _ := protowire.ConsumeFixed32(b)
			dst = append(dst, math.Float32frombits(v))
		}
		return dst, nil
	}
	return nil, f.want(protowire.Fixed32Type)
}

// appendUint32s adds a repeated uint32 field, packed or not, to dst.
func (f field) appendUint32s(dst []uint32) ([]uint32, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, uint32(f.bits)), nil
	case protowire.BytesType:
		for b := f.bytes; len(b) > 0; {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, errorf(InvalidArgument, "invalid protobuf: packed varints in field %d: %v", f.num, protowire.ParseError(n))
			}
			dst = append(dst, uint32(v))
			b = b[n:]
		}
		return dst, nil
	}
	return nil, f.want(protowire.VarintType)
}

// decodeSparse decodes SparseValues{indices=1, values=2}.
func decodeSparse(b []byte) (*SparseValues, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	sv := &SparseValues{}
	for _, f := range fs {
		switch f.num {
		case 1:
			sv.Indices, err = f.appendUint32s(sv.Indices)
		case 2:
			sv.Values, err = f.appendFloats(sv.Values)
		}
		if err != nil {
			return nil, err
		}
	}
	return sv, nil
}

// decodeVector decodes Vector{id=1, values=2, metadata=3, sparse_values=4}.
func decodeVector(b []byte) (Vector, error) {
	var v Vector
	fs, err := fields(b)
	if err != nil {
		return v, err
	}
	for _, f := range fs {
		switch f.num {
		case 1:
			v.ID, err = f.str()
		case 2:
			v.Values, err = f.appendFloats(v.Values)
		case 3:
			if err = f.want(protowire.BytesType); err == nil {
				v.Metadata, err = decodeStruct(f.bytes, 0)
			}
		case 4:
			if err = f.want(protowire.BytesType); err == nil {
				v.Sparse, err = decodeSparse(f.bytes)
			}
		}
		if err != nil {
			return v, err
		}
	}
	return v, nil
}

// decodeStruct decodes google.protobuf.Struct{fields=1 map<string, Value>}.
func decodeStruct(b []byte, depth int) (map[string]any, error) {
	if depth > maxStructDepth {
		return nil, errorf(InvalidArgument, "invalid protobuf: metadata nested deeper than %d levels", maxStructDepth)
	}
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, f := range fs {
		if f.num != 1 {
			continue
		}
		if err := f.want(protowire.BytesType); err != nil {
			return nil, err
		}
		entry, err := fields(f.bytes)
		if err != nil {
			return nil, err
		}
		var key string
		var val any
		for _, e := range entry {
			switch e.num {
			case 1:
				key, err = e.str()
			case 2:
				if err = e.want(protowire.BytesType); err == nil {
					val, err = decodeValue(e.bytes, depth+1)
				}
			}
			if err != nil {
				return nil, err
			}
		}
		out[key] = val
	}
	return out, nil
}

// decodeValue decodes google.protobuf.Value, a oneof of null=1, number=2,
// string=3, bool=4, struct=5, list=6; the last kind on the wire wins.
func decodeValue(b []byte, depth int) (any, error) {
	if depth > maxStructDepth {
		return nil, errorf(InvalidArgument, "invalid protobuf: metadata nested deeper than %d levels", maxStructDepth)
	}
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	var val any
	for _, f := range fs {
		switch f.num {
		case 1:
			err = f.want(protowire.VarintType)
			val = nil
		case 2:
			if err = f.want(protowire.Fixed64Type); err == nil {
				val = math.Float64frombits(f.bits)
			}
		case 3:
			val, err = f.str()
		case 4:
			val, err = f.boolean()
		case 5:
			if err = f.want(protowire.BytesType); err == nil {
				val, err = decodeStruct(f.bytes, depth+1)
			}
		case 6:
			if err = f.want(protowire.BytesType); err == nil {
				val, err = decodeList(f.bytes, depth+1)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return val, nil
}

// decodeList decodes google.protobuf.ListValue{values=1 repeated Value}.
func decodeList(b []byte, depth int) ([]any, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, f := range fs {
		if f.num != 1 {
			continue
		}
		if err := f.want(protowire.BytesType); err != nil {
			return nil, err
		}
		v, err := decodeValue(f.bytes, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// The append* functions encode; a zero value is left out as proto3 does.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFloat(b []byte, num protowire.Number, v float32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendPackedFloats(b []byte, num protowire.Number, vs []float32) []byte {
	if len(vs) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(4*len(vs)))
	for _, v := range vs {
		b = protowire.AppendFixed32(b, math.Float32bits(v))
	}
	return b
}

func encodeSparse(sv *SparseValues) []byte {
	var packed, b []byte
	for _, i := range sv.Indices {
		packed = protowire.AppendVarint(packed, uint64(i))
	}
	if len(packed) > 0 {
		b = appendMessage(b, 1, packed)
	}
	return appendPackedFloats(b, 2, sv.Values)
}

// encodeUsage encodes Usage{read_units=1}.
func encodeUsage(readUnits uint32) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(readUnits))
}

// encodeStruct encodes metadata as google.protobuf.Struct, keys sorted.
func encodeStruct(m map[string]any) []byte {
	var b []byte
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var entry []byte
		entry = appendString(entry, 1, k)
		entry = appendMessage(entry, 2, encodeValue(m[k]))
		b = appendMessage(b, 1, entry)
	}
	return b
}

func encodeValue(v any) []byte {
	var b []byte
	switch v := v.(type) {
	case nil:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 0)
	case float64:
		b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v))
	case string:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, v)
	case bool:
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v))
	case map[string]any:
		b = appendMessage(b, 5, encodeStruct(v))
	case []any:
		var list []byte
		for _, e := range v {
			list = appendMessage(list, 1, encodeValue(e))
		}
		b = appendMessage(b, 6, list)
	}
	return b
}
