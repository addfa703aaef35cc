package pcextract

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// pcRules covers the default namespace (subject user_id) and "team"
// (subjects owner and members); other namespaces are not covered.
func pcRules(t testing.TB) *Rules {
	t.Helper()
	r, err := NewRules("docs", map[string][]string{
		"":     {"user_id"},
		"team": {"owner", "members"},
	})
	require.NoError(t, err)
	return r
}

// pcRulesAny covers "team" (owner) and every other namespace ("*", user_id).
func pcRulesAny(t testing.TB) *Rules {
	t.Helper()
	r, err := NewRules("docs", map[string][]string{
		"team": {"owner"},
		"*":    {"user_id"},
	})
	require.NoError(t, err)
	return r
}

// pbAbsent as a namespace leaves the field out of the message.
const pbAbsent = "\x00absent"

func pbString(num protowire.Number, s string) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func pbMsg(num protowire.Number, parts ...[]byte) []byte {
	var content []byte
	for _, p := range parts {
		content = append(content, p...)
	}
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, content)
}

func pbVarint(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func pbNamespace(num protowire.Number, ns string) []byte {
	if ns == pbAbsent {
		return nil
	}
	return pbString(num, ns)
}

// Values of google.protobuf.Value.
func pbValueString(s string) []byte { return pbString(3, s) }
func pbValueBool(v bool) []byte {
	if v {
		return pbVarint(4, 1)
	}
	return pbVarint(4, 0)
}
func pbValueNull() []byte { return pbVarint(1, 0) }
func pbValueNumber(f float64) []byte {
	b := protowire.AppendTag(nil, 2, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(f))
}
func pbValueList(vals ...[]byte) []byte {
	var elems [][]byte
	for _, v := range vals {
		elems = append(elems, pbMsg(1, v))
	}
	return pbMsg(6, elems...)
}

// pbEntry is one entry of a Struct's fields map, as the Struct's field 1.
func pbEntry(key string, value []byte) []byte {
	return pbMsg(1, pbString(1, key), pbMsg(2, value))
}

// pbStruct is the content of a google.protobuf.Struct.
func pbStruct(entries ...[]byte) []byte {
	var b []byte
	for _, e := range entries {
		b = append(b, e...)
	}
	return b
}

// pbFloats is a packed repeated float field.
func pbFloats(num protowire.Number, dim int) []byte {
	var content []byte
	for i := 0; i < dim; i++ {
		content = protowire.AppendFixed32(content, math.Float32bits(float32(i)/float32(dim)))
	}
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, content)
}

// pbVector is the content of a Vector with dim values, sparse values and,
// when meta is not nil, metadata.
func pbVector(id string, dim int, meta []byte) []byte {
	b := pbString(1, id)
	b = append(b, pbFloats(2, dim)...)
	if meta != nil {
		b = append(b, pbMsg(3, meta)...)
	}
	sparse := append(pbMsg(1, protowire.AppendVarint(nil, 3)), pbFloats(2, 1)...)
	return append(b, pbMsg(4, sparse)...)
}

func pbUpsert(ns string, vectors ...[]byte) []byte {
	var b []byte
	for _, v := range vectors {
		b = append(b, pbMsg(1, v)...)
	}
	return append(b, pbNamespace(2, ns)...)
}
