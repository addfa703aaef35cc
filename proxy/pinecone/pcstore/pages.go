package pcstore

import (
	"context"
	"slices"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
)

// listPage is how many ids one list request asks for (Pinecone's largest
// page); each page's records are then fetched for their metadata.
const listPage = 100

// eachPage lists namespace ns page by page and fetches each page's
// records, calling fn with the page's records still present, in listing
// order. One page is held at a time, whatever the namespace's size.
// Pinecone cannot filter a listing by metadata, so reading metadata means
// fetching every record.
//
// fields are the metadata fields fn reads: a document index's fetch asks
// for those only; the vectors API has no such choice.
func (ix *Index) eachPage(ctx context.Context, ns string, fields []string, fn func(page []*pinecone.Vector) error) error {
	if ix.docs != nil {
		return ix.eachDocumentPage(ctx, ns, fields, fn)
	}
	conn := ix.namespace(ns)
	limit := uint32(listPage)
	records := make([]*pinecone.Vector, 0, listPage)
	var token *string
	for {
		if err := ix.wait(ctx); err != nil {
			return err
		}
		listed, err := conn.ListVectors(ctx, &pinecone.ListVectorsRequest{Limit: &limit, PaginationToken: token})
		if err != nil {
			return ix.failed("list", ns, err)
		}
		ids := make([]string, 0, len(listed.VectorIds))
		for _, id := range listed.VectorIds {
			if id != nil {
				ids = append(ids, *id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		if err := ix.wait(ctx); err != nil {
			return err
		}
		res, err := conn.FetchVectors(ctx, ids)
		if err != nil {
			return ix.failed("fetch", ns, err)
		}
		records = records[:0]
		for _, id := range ids {
			if v := res.Vectors[id]; v != nil { // nil: deleted since it was listed
				records = append(records, v)
			}
		}
		if len(records) > 0 {
			if err := fn(records); err != nil {
				return err
			}
		}
		if listed.NextPaginationToken == nil || *listed.NextPaginationToken == "" {
			return nil
		}
		token = listed.NextPaginationToken
	}
}

// eachDocumentPage is eachPage on a document index: list, then fetch the
// page's ids with only fields.
func (ix *Index) eachDocumentPage(ctx context.Context, ns string, fields []string, fn func(page []*pinecone.Vector) error) error {
	token := ""
	for {
		if err := ix.wait(ctx); err != nil {
			return err
		}
		ids, next, err := ix.listDocuments(ctx, ns, token)
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := ix.wait(ctx); err != nil {
			return err
		}
		page, err := ix.fetchDocuments(ctx, ns, ids, fields)
		if err != nil {
			return err
		}
		order := make(map[string]int, len(ids))
		for i, id := range ids {
			order[id] = i
		}
		slices.SortFunc(page, func(a, b *pinecone.Vector) int { return order[a.Id] - order[b.Id] })
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		token = next
	}
}

// wait is Config.Pace before one request of a page-by-page read.
func (ix *Index) wait(ctx context.Context) error {
	if ix.pace == nil {
		return nil
	}
	return ix.pace(ctx)
}
