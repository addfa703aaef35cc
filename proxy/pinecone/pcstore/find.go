package pcstore

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// search returns the ids of the records of namespace ns whose metadata
// names subject now: the ledger's ids and the ids the filtered queries
// find, fetched and checked (see the package comment).
func (ix *Index) search(ctx context.Context, ns string, fields []string, subject string, ids []string) ([]string, error) {
	if !utf8.ValidString(subject) {
		return nil, nil // metadata strings are UTF-8: no record can name it
	}
	if ix.docs != nil {
		return ix.searchDocuments(ctx, ns, fields, subject, ids)
	}
	conn := ix.namespace(ns)
	candidates := map[string]bool{}
	for _, id := range ids {
		candidates[id] = true
	}
	dim, err := ix.dense(ctx)
	if err != nil {
		return nil, err
	}
	if dim > 0 { // 0: the index holds no record a query could find
		for _, f := range subjectFilters(fields, subject) {
			if err := ix.queryAll(ctx, conn, ns, f, dim, candidates); err != nil {
				return nil, err
			}
		}
	}
	return ix.fetchNaming(ctx, conn, ns, candidates, fields, subject)
}

// queryAll adds to found the ids of the records that pass filter: a query
// returning fewer than topK matches has returned all; otherwise it is
// repeated with each other probe vector (one that brings nothing new may
// still be followed by one that does). Records the probes miss are found
// by a later look, once the ones found are deleted.
func (ix *Index) queryAll(ctx context.Context, conn *pinecone.IndexConnection, ns string, filter *pinecone.MetadataFilter, dim uint32, found map[string]bool) error {
	for p := range probes(dim) {
		res, err := conn.QueryByVectorValues(ctx, &pinecone.QueryByVectorValuesRequest{
			Vector: probe(dim, p), TopK: ix.topK, MetadataFilter: filter,
		})
		if err != nil {
			return ix.failed("query", ns, err)
		}
		for _, m := range res.Matches {
			if m != nil && m.Vector != nil {
				found[m.Vector.Id] = true
			}
		}
		if len(res.Matches) < int(ix.topK) {
			return nil
		}
	}
	return nil
}

// probes is how many distinct probe vectors there are for dim, at most
// maxProbes.
func probes(dim uint32) int { return min(maxProbes, 2+2*int(dim)) }

// probe is the p-th query vector: all ones, all minus ones, then ± each
// basis vector. Each is non-zero (cosine indexes refuse a zero vector) and
// orders the records differently, so that repeated queries reach records a
// full topK hid.
func probe(dim uint32, p int) []float32 {
	v := make([]float32, dim)
	switch p {
	case 0, 1:
		x := float32(1 - 2*p)
		for i := range v {
			v[i] = x
		}
	default:
		k := (p - 2) / 2 % int(dim)
		v[k] = float32(1 - 2*(p%2))
	}
	return v
}

// fetchNaming fetches ids in chunks and keeps those whose record exists
// and whose metadata names subject, sorted.
func (ix *Index) fetchNaming(ctx context.Context, conn *pinecone.IndexConnection, ns string, ids map[string]bool, fields []string, subject string) ([]string, error) {
	all := make([]string, 0, len(ids))
	for id := range ids {
		all = append(all, id)
	}
	slices.Sort(all)
	var out []string
	for chunk := range slices.Chunk(all, chunkSize) {
		res, err := conn.FetchVectors(ctx, chunk)
		if err != nil {
			return nil, ix.failed("fetch", ns, err)
		}
		for id, v := range res.Vectors {
			if v != nil && names(v.Metadata, fields, subject) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// names reports whether metadata names subject in one of fields (see
// subjectsOf).
func names(md *structpb.Struct, fields []string, subject string) bool {
	return slices.Contains(subjectsOf(md, fields), subject)
}

// subjectsOf returns the subjects metadata names in fields: a string, a
// number's one text (pcextract.NumberSubject), or each string of a
// list. It is extract's rule for tagging Pinecone writes, so that forget
// deletes and reconcile adopts what capture attributes.
func subjectsOf(md *structpb.Struct, fields []string) []string {
	if md == nil {
		return nil
	}
	var out []string
	for _, f := range fields {
		switch v := md.GetFields()[f].GetKind().(type) {
		case *structpb.Value_StringValue:
			out = append(out, v.StringValue)
		case *structpb.Value_NumberValue:
			if s, ok := pcextract.NumberSubject(v.NumberValue); ok {
				out = append(out, s)
			}
		case *structpb.Value_ListValue:
			for _, e := range v.ListValue.GetValues() {
				if s, ok := e.GetKind().(*structpb.Value_StringValue); ok {
					out = append(out, s.StringValue)
				}
			}
		}
	}
	return out
}

// subjectFilters are the metadata filters selecting records whose field
// names subject (valid UTF-8): {field: {"$eq": subject}} per field ($eq
// matches a list field holding the value too), and {field: {"$eq": n}} as
// well when subject is the text of the number n
// (pcextract.SubjectNumber).
func subjectFilters(fields []string, subject string) []*pinecone.MetadataFilter {
	values := []*structpb.Value{structpb.NewStringValue(subject)}
	if n, ok := pcextract.SubjectNumber(subject); ok {
		values = append(values, structpb.NewNumberValue(n))
	}
	var out []*pinecone.MetadataFilter
	for _, f := range fields {
		for _, v := range values {
			eq := &structpb.Struct{Fields: map[string]*structpb.Value{"$eq": v}}
			out = append(out, &structpb.Struct{Fields: map[string]*structpb.Value{f: structpb.NewStructValue(eq)}})
		}
	}
	return out
}
