package pcextract

import (
	"errors"
	"fmt"

	"github.com/lethe-privacy/lethe/extract"
	"google.golang.org/protobuf/encoding/protowire"
)

// The Pinecone gRPC data plane's write messages (service VectorService, no
// proto package; field numbers as in go-pinecone v5's generated
// internal/gen/db_data/grpc/db_data_2025-10.pb.go). The
// functions take one message's bytes, without gRPC's 5-byte frame prefix.
// Messages are walked field by field; values and sparse values (fields 2, 4
// of Vector; 2, 5 of UpdateRequest) are stepped over as length-delimited
// bytes, never read as floats.

// protoFields steps through the fields of one protobuf message. It keeps
// its place as an offset, not as a shrinking slice: storing a slice
// through the pointer next has would cost a GC write barrier per field
// while a collection runs, which was most of a walk's time.
type protoFields struct {
	b   []byte
	off int
	err error
}

// next returns the next field. For length-delimited fields val is the
// content; for the others it is the encoded value (a varint, 4 or 8 bytes).
// At the end, or on malformed input, ok is false; err says which.
func (p *protoFields) next() (num protowire.Number, typ protowire.Type, val []byte, ok bool) {
	if p.off >= len(p.b) || p.err != nil {
		return 0, 0, nil, false
	}
	rest := p.b[p.off:]
	num, typ, n := protowire.ConsumeTag(rest)
	if n < 0 {
		p.err = protowire.ParseError(n)
		return 0, 0, nil, false
	}
	rest = rest[n:]
	p.off += n
	if typ == protowire.BytesType {
		val, n = protowire.ConsumeBytes(rest)
	} else {
		n = protowire.ConsumeFieldValue(num, typ, rest)
		if n >= 0 {
			val = rest[:n]
		}
	}
	if n < 0 {
		p.err = protowire.ParseError(n)
		return 0, 0, nil, false
	}
	p.off += n
	return num, typ, val, true
}

var errWireType = errors.New("wrong wire type")

// want checks a known field's wire type.
// once is wantType for a singular field, which must appear at most once:
// a protobuf parser merges repeats (the last scalar wins, messages merge),
// and tags read from one occurrence could miss what the store keeps, so
// repeats are refused rather than merged. Encoders write such a field once.
func once(seen *bool, typ, want protowire.Type, field string) error {
	if *seen {
		return fmt.Errorf("%s appears more than once", field)
	}
	*seen = true
	return wantType(typ, want, field)
}

func wantType(typ, want protowire.Type, field string) error {
	if typ != want {
		return fmt.Errorf("%s: %w", field, errWireType)
	}
	return nil
}

// UpdateGRPC tags an UpdateRequest{id=1, values=2, set_metadata=3,
// namespace=4, sparse_values=5, filter=6, dry_run=7}: see Rules for
// what an update yields.
func (r *Rules) UpdateGRPC(msg []byte) ([]extract.Tag, error) {
	if err := checkWire(msg, &wireUpdate, 0); err != nil {
		return nil, grpcErr("update", err)
	}
	var id, set []byte
	hasID, hasSet, hasNS, hasDryRun, dryRun := false, false, false, false, false
	ns := extract.DefaultNamespace
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		var err error
		switch num {
		case 1:
			err = once(&hasID, typ, protowire.BytesType, "id")
			id = val
		case 3:
			err = once(&hasSet, typ, protowire.BytesType, "set_metadata")
			set = val
		case 4:
			if err = once(&hasNS, typ, protowire.BytesType, "namespace"); err == nil {
				ns, err = protoNamespace(val)
			}
		case 6:
			err = wantType(typ, protowire.BytesType, "filter")
		case 7:
			if err = once(&hasDryRun, typ, protowire.VarintType, "dry_run"); err == nil {
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
		return []extract.Tag{r.unattributedUpdate(ns, fields)}, nil
	}
	idText, err := protoString(id)
	if err != nil {
		return nil, grpcErr("update", fmt.Errorf("id %w", err))
	}
	return []extract.Tag{{Table: r.table(ns), Op: extract.OpWrite, ID: idText, Subjects: subjects}}, nil
}

// DeleteGRPC tags a DeleteRequest{ids=1, delete_all=2, namespace=3,
// filter=4}: one extract.OpDelete per id, one extract.OpDeleteAll for
// delete_all true, one extract.OpDeleteByFilter for a filter (see Rules).
func (r *Rules) DeleteGRPC(msg []byte) ([]extract.Tag, error) {
	if err := checkWire(msg, &wireDelete, 0); err != nil {
		return nil, grpcErr("delete", err)
	}
	ns := extract.DefaultNamespace
	count, hasNS, all, filter := 0, false, false, false
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
			if err = wantType(typ, protowire.VarintType, "delete_all"); err == nil {
				v, _ := protowire.ConsumeVarint(val)
				all = v != 0 // the last value of a repeated scalar wins
			}
		case 3:
			if err = once(&hasNS, typ, protowire.BytesType, "namespace"); err == nil {
				ns, err = protoNamespace(val)
			}
		case 4:
			err = wantType(typ, protowire.BytesType, "filter")
			filter = true
		}
		if err != nil {
			return nil, grpcErr("delete", err)
		}
	}
	if p.err != nil {
		return nil, grpcErr("delete", p.err)
	}
	if _, covered := r.fields(ns); !covered || count == 0 && !all && !filter {
		return nil, nil
	}
	table := r.table(ns)
	tags := make([]extract.Tag, 0, count+2)
	if all {
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteAll})
	}
	if filter {
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteByFilter})
	}
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
		id, err := protoString(val)
		if err != nil {
			return nil, grpcErr("delete", fmt.Errorf("ids[%d] %w", len(tags), err))
		}
		tags = append(tags, extract.Tag{Table: table, Op: extract.OpDelete, ID: id})
	}
	return tags, nil
}

// protoNamespace is a request's namespace field, canonical.
func protoNamespace(val []byte) (string, error) {
	s, err := protoString(val)
	if err != nil {
		return "", fmt.Errorf("namespace %w", err)
	}
	return extract.CanonicalNamespace(s), nil
}

func grpcErr(op string, err error) error {
	return fmt.Errorf("pinecone: gRPC %s request is malformed: %w", op, err)
}
