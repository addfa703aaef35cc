package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// maxBodyBytes is Pinecone's (and the emulator's default) request limit.
const maxBodyBytes = 2 << 20

// upsertBatch is one upsert of n vectors of dim values, each with metadata
// holding a subject (user_id), a source and ~500 bytes of text, as a RAG
// ingester sends; encoded once as the REST JSON body and as the gRPC
// UpsertRequest message, so that the clients only send bytes.
type upsertBatch struct {
	vectors int
	rest    []byte
	grpc    []byte
	// With fresh ids, where each id's stamp (stampWidth digits) lies in
	// rest and in grpc; none when every upsert sends the same ids.
	restStamps, grpcStamps []int
}

// stampWidth is the digits of the stamp that starts each id with fresh
// ids: the same within an upsert, new at every upsert.
const stampWidth = 12

// newUpsertBatch encodes the batch; with fresh, each id starts with a
// stamp that bodySource rewrites before every upsert, so that no upsert
// names a record an earlier one wrote.
func newUpsertBatch(n, dim int, namespace string, fresh bool) (*upsertBatch, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 12)
	var js strings.Builder
	js.WriteString(`{"namespace":` + strconv.Quote(namespace) + `,"vectors":[`)
	var pb []byte
	for i := range n {
		id := fmt.Sprintf("doc-%d#chunk-%d", i/10, i%10)
		if fresh {
			id = strings.Repeat("0", stampWidth) + "-" + id
		}
		meta := map[string]any{"user_id": fmt.Sprintf("user-%d", i%7), "source": "notes.md", "text": text}
		values := make([]float32, dim)
		for d := range values {
			values[d] = float32(rng.NormFloat64() * 0.3)
		}

		if i > 0 {
			js.WriteByte(',')
		}
		js.WriteString(`{"id":` + strconv.Quote(id) + `,"values":[`)
		for d, v := range values {
			if d > 0 {
				js.WriteByte(',')
			}
			js.WriteString(strconv.FormatFloat(float64(v), 'g', 8, 32)) // 8 digits: ~1.8 MB for 100 × 1536, under the 2 MB limit
		}
		metaJSON, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		js.WriteString(`],"metadata":` + string(metaJSON) + `}`)

		pbMeta, err := structpb.NewStruct(meta)
		if err != nil {
			return nil, err
		}
		metaBytes, err := proto.Marshal(pbMeta)
		if err != nil {
			return nil, err
		}
		pb = protowire.AppendTag(pb, 1, protowire.BytesType) // UpsertRequest.vectors
		pb = protowire.AppendBytes(pb, grpcVector(id, values, metaBytes))
	}
	js.WriteString(`]}`)
	pb = protowire.AppendTag(pb, 2, protowire.BytesType) // UpsertRequest.namespace
	pb = protowire.AppendString(pb, namespace)

	b := &upsertBatch{vectors: n, rest: []byte(js.String()), grpc: pb}
	if fresh {
		for i := range n {
			id := fmt.Sprintf("%s-doc-%d#chunk-%d", strings.Repeat("0", stampWidth), i/10, i%10)
			rest, err := onlyIndex(b.rest, strconv.Quote(id))
			if err != nil {
				return nil, err
			}
			grpc, err := onlyIndex(b.grpc, id)
			if err != nil {
				return nil, err
			}
			b.restStamps = append(b.restStamps, rest+1) // after the quote
			b.grpcStamps = append(b.grpcStamps, grpc)
		}
	}
	if !json.Valid(b.rest) {
		return nil, fmt.Errorf("the REST body is not valid JSON")
	}
	if len(b.rest) > maxBodyBytes {
		return nil, fmt.Errorf("the REST body is %d bytes, over Pinecone's limit of %d: use fewer vectors or dimensions", len(b.rest), maxBodyBytes)
	}
	return b, nil
}

// onlyIndex is where s is in body, which must hold it once.
func onlyIndex(body []byte, s string) (int, error) {
	i := bytes.Index(body, []byte(s))
	if i < 0 || bytes.LastIndex(body, []byte(s)) != i {
		return 0, fmt.Errorf("id %s is not in the body exactly once", s)
	}
	return i, nil
}

// stamps numbers the upserts with fresh ids, across every client and run.
var stamps atomic.Uint64

// bodySource gives one client the body of each of its upserts: the batch's
// own bytes, or with fresh ids a copy of its own with a new stamp in every
// id each time.
type bodySource struct {
	body   []byte
	stamps []int
}

func (b *upsertBatch) source(protocol string) *bodySource {
	body, at := b.rest, b.restStamps
	if protocol == "grpc" {
		body, at = b.grpc, b.grpcStamps
	}
	if len(at) == 0 {
		return &bodySource{body: body}
	}
	return &bodySource{body: slices.Clone(body), stamps: at}
}

// next returns the body to send now; it is the same slice every time, so
// the last upsert must be done with it.
func (s *bodySource) next() []byte {
	if len(s.stamps) == 0 {
		return s.body
	}
	var digits [stampWidth]byte
	v := stamps.Add(1)
	for i := stampWidth - 1; i >= 0; i-- {
		digits[i] = '0' + byte(v%10)
		v /= 10
	}
	for _, at := range s.stamps {
		copy(s.body[at:], digits[:])
	}
	return s.body
}

// grpcVector encodes Vector{id=1, values=2 (packed float), metadata=3}.
func grpcVector(id string, values []float32, meta []byte) []byte {
	v := protowire.AppendTag(nil, 1, protowire.BytesType)
	v = protowire.AppendString(v, id)
	packed := make([]byte, 0, 4*len(values))
	for _, f := range values {
		packed = protowire.AppendFixed32(packed, math.Float32bits(f))
	}
	v = protowire.AppendTag(v, 2, protowire.BytesType)
	v = protowire.AppendBytes(v, packed)
	v = protowire.AppendTag(v, 3, protowire.BytesType)
	return protowire.AppendBytes(v, meta)
}
