package pcextract

import (
	"errors"
	"math"
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/encoding/protowire"
)

func pbFixed64(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func pbFixed32(num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), v)
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// A field the write messages' schema knows, sent with a wire type the
// schema does not allow, is refused at every depth and in every namespace
// (covered or not): a parser that decodes by schema reads it by its
// declared type and then finds other fields, such as a metadata, inside
// its bytes. Packed and unpacked repeated scalars are both accepted.
func TestPineconeGRPC_SchemaFieldsWithOtherWireTypesAreRefused(t *testing.T) {
	r := pcRules(t)
	meta := pbStruct(pbEntry("user_id", pbValueString("alice")))
	id := pbString(1, "a")
	for name, msg := range map[string][]byte{
		"Vector.values as fixed64":                pbUpsert(pbAbsent, cat(id, pbFixed64(2, 1))),
		"Vector.values as fixed64, uncovered":     pbUpsert("elsewhere", cat(id, pbFixed64(2, 1))),
		"Vector.values packed, not whole floats":  pbUpsert(pbAbsent, cat(id, pbMsg(2, []byte{1, 2, 3, 4, 5, 6}))),
		"Vector.metadata as varint":               pbUpsert(pbAbsent, cat(id, pbVarint(3, 1))),
		"UpsertRequest.vectors as fixed32":        cat(pbFixed32(1, 7), pbNamespace(2, "elsewhere")),
		"UpsertRequest.namespace as varint":       cat(pbMsg(1, id), pbVarint(2, 1)),
		"Vector.sparse_values as varint":          pbUpsert(pbAbsent, cat(id, pbVarint(4, 1))),
		"SparseValues.indices as fixed64":         pbUpsert(pbAbsent, cat(id, pbMsg(4, pbFixed64(1, 1)))),
		"SparseValues.indices packed, cut":        pbUpsert(pbAbsent, cat(id, pbMsg(4, pbMsg(1, []byte{0x80})))),
		"SparseValues.values as fixed64":          pbUpsert(pbAbsent, cat(id, pbMsg(4, pbFixed64(2, 1)))),
		"other metadata entry's number as varint": pbUpsert(pbAbsent, cat(id, pbMsg(3, cat(meta, pbEntry("n", pbVarint(2, 1)))))),
		"nested list element as fixed32":          pbUpsert(pbAbsent, cat(id, pbMsg(3, pbEntry("tags", pbValueList(pbFixed32(3, 1)))))),
		"struct_value's entry key as varint":      pbUpsert(pbAbsent, cat(id, pbMsg(3, pbEntry("o", pbMsg(5, pbMsg(1, pbVarint(1, 1))))))),
	} {
		_, err := r.UpsertGRPC(msg)
		if !errors.Is(err, errPackedRun) {
			assert.ErrorIs(t, err, errWireType, name)
		}
	}
	for name, msg := range map[string][]byte{
		"UpdateRequest.values as fixed64":        cat(id, pbFixed64(2, 1), pbMsg(3, meta)),
		"UpdateRequest.sparse_values as fixed32": cat(id, pbFixed32(5, 1), pbMsg(3, meta)),
		"UpdateRequest.filter's value":           cat(pbMsg(6, pbEntry("g", pbFixed32(4, 1))), pbMsg(3, meta)),
		"UpdateRequest.dry_run as fixed64":       cat(id, pbFixed64(7, 1)),
	} {
		_, err := r.UpdateGRPC(msg)
		assert.ErrorIs(t, err, errWireType, name)
	}
	_, err := r.DeleteGRPC(cat(pbMsg(4, pbEntry("g", pbFixed64(3, 1))), pbNamespace(3, "elsewhere")))
	assert.ErrorIs(t, err, errWireType, "DeleteRequest.filter's string_value as fixed64")

	// Repeated floats unpacked, sparse indices unpacked: both protobuf.
	unpacked := cat(id, pbFixed32(2, math.Float32bits(1)), pbFixed32(2, math.Float32bits(2)),
		pbMsg(4, cat(pbVarint(1, 3), pbVarint(1, 300), pbFixed32(2, 0))), pbMsg(3, meta))
	tags, err := r.UpsertGRPC(pbUpsert(pbAbsent, unpacked))
	assert.NoError(t, err)
	assert.Equal(t, []extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}, tags)
}
