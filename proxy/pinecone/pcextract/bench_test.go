package pcextract

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// pcUpsertJSON is a REST upsert of n vectors of dim values, each with
// metadata holding a subject and a chunk of text, as a RAG ingester sends.
func pcUpsertJSON(n, dim int) []byte {
	var b strings.Builder
	b.WriteString(`{"namespace":"__default__","vectors":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"doc-%d","values":[`, i)
		for d := 0; d < dim; d++ {
			if d > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(d)/float64(dim)-0.5, 'g', 8, 32))
		}
		fmt.Fprintf(&b, `],"metadata":{"user_id":"user-%d","source":"notes.md","text":"%s"}}`, i%7, strings.Repeat("lorem ipsum ", 40))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func pcUpsertProto(n, dim int) []byte {
	vectors := make([][]byte, n)
	for i := range vectors {
		meta := pbStruct(pbEntry("user_id", pbValueString(fmt.Sprintf("user-%d", i%7))),
			pbEntry("source", pbValueString("notes.md")),
			pbEntry("text", pbValueString(strings.Repeat("lorem ipsum ", 40))))
		vectors[i] = pbVector(fmt.Sprintf("doc-%d", i), dim, meta)
	}
	return pbUpsert("__default__", vectors...)
}

// BenchmarkPineconeUpsert extracts the tags of an upsert of 100 vectors
// with metadata. Comparing dimensions shows that allocations do not depend
// on the number of floats, only time (one pass over the bytes) does.
// REST-two-pass is upsertRESTTwoPass, the reference UpsertREST is fuzzed
// against, for comparison.
func BenchmarkPineconeUpsert(b *testing.B) {
	r := pcRules(b)
	for _, dim := range []int{16, 1536} {
		rest, grpc := pcUpsertJSON(100, dim), pcUpsertProto(100, dim)
		b.Run(fmt.Sprintf("REST/dim=%d", dim), func(b *testing.B) {
			b.SetBytes(int64(len(rest)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if tags, err := r.UpsertREST(rest); err != nil || len(tags) != 100 {
					b.Fatal(len(tags), err)
				}
			}
		})
		b.Run(fmt.Sprintf("REST-two-pass/dim=%d", dim), func(b *testing.B) { // the reference: json.Valid, then the walk
			b.SetBytes(int64(len(rest)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if tags, err := r.upsertRESTTwoPass(rest); err != nil || len(tags) != 100 {
					b.Fatal(len(tags), err)
				}
			}
		})
		b.Run(fmt.Sprintf("gRPC/dim=%d", dim), func(b *testing.B) {
			b.SetBytes(int64(len(grpc)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if tags, err := r.UpsertGRPC(grpc); err != nil || len(tags) != 100 {
					b.Fatal(len(tags), err)
				}
			}
		})
	}
}
