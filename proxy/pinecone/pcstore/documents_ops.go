package pcstore

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/extract"
)

// documentPage is how many documents one fetch by filter asks for: the
// documents API's largest page.
const documentPage = 10000

// fetchedDocuments is a documents fetch's answer, {"documents": {id:
// {"_id", …fields}}, "pagination"?: {"next"}}.
type fetchedDocuments struct {
	Documents  map[string]map[string]any `json:"documents"`
	Pagination *struct {
		Next string `json:"next"`
	} `json:"pagination"`
}

// next is the answer's pagination token, "" on the last page.
func (f fetchedDocuments) next() string {
	if f.Pagination == nil {
		return ""
	}
	return f.Pagination.Next
}

// records are the answer's documents as records whose metadata is the
// document's fields (all but "_id"), so that the vectors' rules (names,
// subjectsOf, epochSeconds) read them unchanged.
func (f fetchedDocuments) records() ([]*pinecone.Vector, error) {
	out := make([]*pinecone.Vector, 0, len(f.Documents))
	for id, fields := range f.Documents {
		delete(fields, "_id")
		md, err := structpb.NewStruct(fields)
		if err != nil {
			return nil, fmt.Errorf("a fetched document's fields cannot be read: %w", err)
		}
		out = append(out, &pinecone.Vector{Id: id, Metadata: md})
	}
	return out, nil
}

// fetchDocuments fetches ids (at most chunkSize) in namespace ns with only
// fields, and returns the documents present.
func (ix *Index) fetchDocuments(ctx context.Context, ns string, ids, fields []string) ([]*pinecone.Vector, error) {
	var got fetchedDocuments
	body := map[string]any{"ids": ids, "include_fields": nonNil(fields)}
	if err := ix.docs.post(ctx, ix.name, ns, "fetch", body, &got); err != nil {
		return nil, err
	}
	recs, err := got.records()
	if err != nil {
		return nil, fmt.Errorf("pinecone: index %q namespace %q: %w", ix.name, ns, err)
	}
	return recs, nil
}

// fetchDocumentsWhere calls fn with each page of the documents of
// namespace ns that pass filter, with only fields, until the last page.
func (ix *Index) fetchDocumentsWhere(ctx context.Context, ns string, filter map[string]any, fields []string, fn func([]*pinecone.Vector)) error {
	token := ""
	for {
		body := map[string]any{"filter": filter, "include_fields": nonNil(fields), "limit": ix.docPage}
		if token != "" {
			body["pagination_token"] = token
		}
		var got fetchedDocuments
		if err := ix.docs.post(ctx, ix.name, ns, "fetch", body, &got); err != nil {
			return err
		}
		recs, err := got.records()
		if err != nil {
			return fmt.Errorf("pinecone: index %q namespace %q: %w", ix.name, ns, err)
		}
		fn(recs)
		if token = got.next(); token == "" {
			return nil
		}
	}
}

// listDocuments returns one page of the ids of namespace ns and the token
// of the next ("" after the last).
func (ix *Index) listDocuments(ctx context.Context, ns, token string) (ids []string, next string, err error) {
	body := map[string]any{"limit": listPage}
	if token != "" {
		body["pagination_token"] = token
	}
	var got struct {
		Documents []struct {
			ID string `json:"_id"`
		} `json:"documents"`
		Pagination *struct {
			Next string `json:"next"`
		} `json:"pagination"`
	}
	if err := ix.docs.post(ctx, ix.name, ns, "list", body, &got); err != nil {
		return nil, "", err
	}
	for _, d := range got.Documents {
		if d.ID != "" {
			ids = append(ids, d.ID)
		}
	}
	if got.Pagination != nil {
		next = got.Pagination.Next
	}
	return ids, next, nil
}

// deleteDocuments deletes ids (at most chunkSize) from namespace ns. The
// answer's matched_records counts the documents found: fewer than the
// ids is no error (a document deleted since it was found), more is, and
// so is an answer without it (not the documents API's).
func (ix *Index) deleteDocuments(ctx context.Context, ns string, ids []string) error {
	var got struct {
		MatchedRecords *int `json:"matched_records"`
	}
	if err := ix.docs.post(ctx, ix.name, ns, "delete", map[string]any{"ids": ids}, &got); err != nil {
		return err
	}
	switch {
	case got.MatchedRecords == nil:
		return fmt.Errorf("pinecone: index %q namespace %q: documents delete answered without matched_records (%w): is the index's api setting right?", ix.name, ns, errDocumentsAnswer)
	case *got.MatchedRecords > len(ids):
		return fmt.Errorf("pinecone: index %q namespace %q: documents delete of %d ids matched %d documents (%w); check the index host", ix.name, ns, len(ids), *got.MatchedRecords, errDocumentsAnswer)
	}
	return nil
}

// namespaces lists the namespaces of a document index (GET /namespaces,
// page by page), the default one spelled "__default__".
func (d *documentsAPI) namespaces(ctx context.Context, index string) ([]string, error) {
	var out []string
	token := ""
	for {
		target := *d.base
		target.Path = "/namespaces"
		q := url.Values{"limit": {strconv.Itoa(listPage)}}
		if token != "" {
			q.Set("paginationToken", token)
		}
		target.RawQuery = q.Encode()
		var got struct {
			Namespaces []struct {
				Name string `json:"name"`
			} `json:"namespaces"`
			Pagination *struct {
				Next string `json:"next"`
			} `json:"pagination"`
		}
		if err := d.do(ctx, index, "", "list_namespaces", http.MethodGet, &target, nil, &got); err != nil {
			return nil, err
		}
		for _, ns := range got.Namespaces {
			out = append(out, extract.CanonicalNamespace(ns.Name))
		}
		if got.Pagination == nil || got.Pagination.Next == "" {
			return out, nil
		}
		token = got.Pagination.Next
	}
}

// nonNil is fields, or an empty list: a JSON null would ask for every
// field.
func nonNil(fields []string) []string {
	if fields == nil {
		return []string{}
	}
	return fields
}
