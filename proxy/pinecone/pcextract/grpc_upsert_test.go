package pcextract

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/encoding/protowire"
)

// upsertGRPCTwoPass is the reference for UpsertGRPC, written the simple
// way: checkWire over the whole request, then a walk that reads each
// vector's id and subjects. The one-walk UpsertGRPC must agree with it on
// every input (FuzzPineconeGRPCUpsertAgreesWithTwoPass).
func (r *Rules) upsertGRPCTwoPass(msg []byte) ([]extract.Tag, error) {
	if err := checkWire(msg, &wireUpsert, upsertDepth); err != nil {
		return nil, grpcErr("upsert", err)
	}
	ns, count, err := upsertHead(msg)
	if err != nil {
		return nil, grpcErr("upsert", err)
	}
	fields, covered := r.fields(ns)
	if !covered || count == 0 {
		return nil, nil
	}
	var tags []extract.Tag
	p := protoFields{b: msg}
	for {
		num, _, val, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue
		}
		t, err := referenceVectorTag(val, fields)
		if err != nil {
			return nil, grpcErr("upsert", fmt.Errorf("vectors[%d]: %w", len(tags), err))
		}
		t.Table = r.table(ns)
		tags = append(tags, t)
	}
	return tags, nil
}

func referenceVectorTag(msg []byte, fields []string) (extract.Tag, error) {
	var id, meta []byte
	hasID, hasMeta := false, false
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := once(&hasID, typ, protowire.BytesType, "id"); err != nil {
				return extract.Tag{}, err
			}
			id = val
		case 3:
			if err := once(&hasMeta, typ, protowire.BytesType, "metadata"); err != nil {
				return extract.Tag{}, err
			}
			meta = val
		}
	}
	if p.err != nil {
		return extract.Tag{}, p.err
	}
	if !hasID || len(id) == 0 {
		return extract.Tag{}, errors.New("no id")
	}
	idText, err := protoString(id)
	if err != nil {
		return extract.Tag{}, fmt.Errorf("id %w", err)
	}
	subjects, _, err := structSubjectsNamed(meta, fields)
	if err != nil {
		return extract.Tag{}, fmt.Errorf("metadata: %w", err)
	}
	return extract.Tag{Op: extract.OpWrite, ID: idText, Subjects: subjects}, nil
}

// upsertGRPCSeeds are requests that exercise each check UpsertGRPC folds
// into its walk, in covered and uncovered namespaces.
func upsertGRPCSeeds() [][]byte {
	meta := pbStruct(pbEntry("user_id", pbValueString("alice")), pbEntry("members", pbValueList(pbValueString("x"), pbValueNumber(1))),
		pbEntry("owner", pbValueNumber(3)))
	id := pbString(1, "a")
	nested := pbStruct(pbEntry("o", pbMsg(5, pbEntry("p", pbMsg(6, pbMsg(1, pbMsg(5, pbEntry("q", pbFixed32(3, 1)))))))))
	var seeds [][]byte
	for _, ns := range []string{pbAbsent, "team", "elsewhere"} {
		seeds = append(seeds,
			pbUpsert(ns, pbVector("a", 3, meta), pbVector("b", 2, nil)),
			pbUpsert(ns, cat(id, pbFixed64(2, 1))),
			pbUpsert(ns, cat(id, pbMsg(2, []byte{1, 2, 3}))),
			pbUpsert(ns, cat(id, pbMsg(4, pbMsg(1, []byte{0x80})))),
			pbUpsert(ns, cat(id, pbMsg(4, pbFixed64(2, 1)))),
			pbUpsert(ns, cat(id, pbMsg(3, cat(meta, pbEntry("n", pbVarint(2, 1)))))),
			pbUpsert(ns, cat(id, pbMsg(3, pbEntry("tags", pbValueList(pbFixed32(3, 1)))))),
			pbUpsert(ns, cat(id, pbMsg(3, nested))),
			pbUpsert(ns, cat(id, pbMsg(3, pbEntry("user_id", pbValueList(pbValueString("u"), pbMsg(5, pbEntry("k", pbVarint(3, 1)))))))),
			pbUpsert(ns, cat(id, pbFixed32(2, math.Float32bits(1)), pbMsg(4, cat(pbVarint(1, 3), pbFixed32(2, 0))), pbMsg(3, meta))),
			pbUpsert(ns, pbVector("a\xff", 1, meta)),
			pbUpsert(ns, pbVector("", 1, meta)),
		)
	}
	return append(seeds, nil, []byte{0x80}, []byte{0x0a, 0x05}, cat(pbFixed32(1, 7), pbNamespace(2, "elsewhere")))
}

// UpsertGRPC's one walk refuses exactly what checkWire followed by the
// reading walk refuses, and tags the rest alike.
func TestUpsertGRPC_AgreesWithTwoPass(t *testing.T) {
	for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
		for i, msg := range upsertGRPCSeeds() {
			assertUpsertGRPCAgrees(t, r, msg, fmt.Sprint("seed ", i))
		}
	}
}

func FuzzPineconeGRPCUpsertAgreesWithTwoPass(f *testing.F) {
	for _, s := range upsertGRPCSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			assertUpsertGRPCAgrees(t, r, msg, "")
		}
	})
}

func assertUpsertGRPCAgrees(t *testing.T, r *Rules, msg []byte, name string) {
	t.Helper()
	tags, err := r.UpsertGRPC(msg)
	want, wantErr := r.upsertGRPCTwoPass(msg)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%s: one walk says %v, two passes %v", name, err, wantErr)
	}
	assert.Equal(t, want, tags, name)
}

// A request's tags cost a few allocations, not some per vector: the ids
// and subjects share one string.
func TestUpsertGRPC_AllocationsDoNotGrowWithVectors(t *testing.T) {
	r := pcRules(t)
	msg := pcUpsertProto(100, 16)
	allocs := testing.AllocsPerRun(20, func() {
		if tags, err := r.UpsertGRPC(msg); err != nil || len(tags) != 100 {
			t.Fatal(len(tags), err)
		}
	})
	if allocs > 10 {
		t.Fatalf("%v allocations for 100 vectors; want at most 10", allocs)
	}
}
