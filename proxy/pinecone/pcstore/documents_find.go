package pcstore

import (
	"context"
	"slices"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"

	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// searchDocuments is search on a document index. The documents API can
// fetch by filter, page by page, so no probe vector is needed: every
// document whose subject field equals the subject (or, for a list field,
// holds it) is fetched with only the subject fields, and the ledger's ids
// the filters did not return are fetched by id. Both are kept only when
// the fields name the subject (the vectors' rule, subjectsOf).
func (ix *Index) searchDocuments(ctx context.Context, ns string, fields []string, subject string, ids []string) ([]string, error) {
	found := map[string]bool{}
	keep := func(page []*pinecone.Vector) {
		for _, d := range page {
			if names(d.Metadata, fields, subject) {
				found[d.Id] = true
			}
		}
	}
	for _, f := range documentFilters(fields, subject) {
		if err := ix.fetchDocumentsWhere(ctx, ns, f, fields, keep); err != nil {
			return nil, err
		}
	}
	rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return found[id] })
	slices.Sort(rest)
	rest = slices.Compact(rest)
	for chunk := range slices.Chunk(rest, chunkSize) {
		page, err := ix.fetchDocuments(ctx, ns, chunk, fields)
		if err != nil {
			return nil, err
		}
		keep(page)
	}
	out := make([]string, 0, len(found))
	for id := range found {
		out = append(out, id)
	}
	slices.Sort(out)
	return out, nil
}

// documentFilters are subjectFilters in the documents API's JSON:
// {field: {"$eq": subject}} per field, and {field: {"$eq": n}} too when
// subject is the text of the number n.
func documentFilters(fields []string, subject string) []map[string]any {
	values := []any{subject}
	if n, ok := pcextract.SubjectNumber(subject); ok {
		values = append(values, n)
	}
	var out []map[string]any
	for _, f := range fields {
		for _, v := range values {
			out = append(out, map[string]any{f: map[string]any{"$eq": v}})
		}
	}
	return out
}
