package pcextract

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/extract"
	"google.golang.org/protobuf/encoding/protowire"
)

// The depths of an UpsertRequest's messages, as checkWire counts them.
const (
	upsertDepth   = 0
	vectorDepth   = upsertDepth + 1
	metadataDepth = vectorDepth + 1
)

// UpsertGRPC tags an UpsertRequest{vectors=1 Vector, namespace=2}: one
// extract.OpWrite per vector.
//
// Its namespace, which may follow the vectors on the wire, decides the
// subject fields, so a first walk reads the request's own fields (a tag and
// a length per vector). In a covered namespace one walk over each vector
// then both checks the wire type of every field the schema knows, at every
// depth, as checkWire does, and reads its id and subjects; in any other,
// checkWire alone checks it. The ids and subjects become one string per
// request, which the tags' strings share, so that a request costs a few
// allocations whatever its number of vectors.
func (r *Rules) UpsertGRPC(msg []byte) ([]extract.Tag, error) {
	ns, count, err := upsertHead(msg)
	if err != nil {
		return nil, grpcErr("upsert", err)
	}
	fields, covered := r.fields(ns)
	if !covered || count == 0 {
		if err := checkWire(msg, &wireUpsert, upsertDepth); err != nil {
			return nil, grpcErr("upsert", err)
		}
		return nil, nil
	}
	read := upsertRead{ids: make([][]byte, 0, count), ends: make([]int, 0, count), subjects: make([][]byte, 0, count)}
	p := protoFields{b: msg}
	for {
		num, _, val, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue
		}
		if err := read.vector(val, fields); err != nil {
			return nil, grpcErr("upsert", fmt.Errorf("vectors[%d]: %w", len(read.ids), err))
		}
	}
	return read.tags(r.table(ns)), nil
}

// upsertHead checks an UpsertRequest's own fields and returns its
// namespace, canonical, and its number of vectors.
func upsertHead(msg []byte) (ns string, vectors int, err error) {
	ns = extract.DefaultNamespace
	nsSeen := false
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		switch num {
		case 1:
			if err := wantType(typ, protowire.BytesType, "vectors"); err != nil {
				return "", 0, err
			}
			vectors++
		case 2:
			if err := once(&nsSeen, typ, protowire.BytesType, "namespace"); err != nil {
				return "", 0, err
			}
			if ns, err = protoNamespace(val); err != nil {
				return "", 0, err
			}
		}
	}
	return ns, vectors, p.err
}

// upsertRead is what the walk over an upsert's vectors has read: views of
// the message's bytes (see structSubjectViews) until tags copies them.
type upsertRead struct {
	ids      [][]byte // one per vector
	subjects [][]byte // every vector's, in order
	ends     []int    // per vector, where its subjects end in subjects
}

// vector reads and checks one Vector{id=1, values=2, metadata=3,
// sparse_values=4}.
func (u *upsertRead) vector(msg []byte, fields []string) error {
	var id []byte
	hasID, hasMeta := false, false
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
			if err = once(&hasMeta, typ, protowire.BytesType, "metadata"); err == nil {
				if u.subjects, _, err = structSubjectViews(val, fields, u.subjects, metadataDepth); err != nil {
					err = fmt.Errorf("metadata: %w", err)
				}
			}
		default:
			if f := wireVector.field(num); f != nil {
				err = f.check(typ, val, vectorDepth, -1)
			}
		}
		if err != nil {
			return err
		}
	}
	if p.err != nil {
		return p.err
	}
	if !hasID || len(id) == 0 {
		return errors.New("no id")
	}
	if !utf8.Valid(id) {
		return fmt.Errorf("id %w", errNotUTF8)
	}
	u.ids = append(u.ids, id)
	u.ends = append(u.ends, len(u.subjects))
	return nil
}

// tags copies the ids and subjects read into one string and returns the
// tags, whose strings are parts of it.
func (u *upsertRead) tags(table string) []extract.Tag {
	size := 0
	for _, b := range u.ids {
		size += len(b)
	}
	for _, b := range u.subjects {
		size += len(b)
	}
	var text strings.Builder
	text.Grow(size)
	for _, b := range u.ids {
		text.Write(b)
	}
	for _, b := range u.subjects {
		text.Write(b)
	}
	all := text.String()
	cut := func(b []byte) string {
		s := all[:len(b)]
		all = all[len(b):]
		return s
	}
	tags := make([]extract.Tag, len(u.ids))
	for i, id := range u.ids {
		tags[i] = extract.Tag{Table: table, Op: extract.OpWrite, ID: cut(id)}
	}
	var subjects []string
	if len(u.subjects) > 0 {
		subjects = make([]string, len(u.subjects))
	}
	for i, b := range u.subjects {
		subjects[i] = cut(b)
	}
	start := 0
	for i, end := range u.ends {
		if end > start {
			tags[i].Subjects = subjects[start:end:end]
		}
		start = end
	}
	return tags
}
