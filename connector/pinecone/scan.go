package pinecone

import (
	"context"
	"fmt"
	"strings"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
)

var (
	_ connector.Scanner = (*Layer)(nil)
	_ connector.Scanner = (*AnyLayer)(nil)
)

// ScanMethod says how Scan reads the records.
func (l *layer) ScanMethod() string {
	where := fmt.Sprintf("namespace %q", l.namespace)
	if l.namespace == "" {
		where = "every namespace describe_index_stats lists without a rule of its own"
	}
	return fmt.Sprintf("list_vectors page by page (%d ids) in %s, fetch_vectors of each page's ids; "+
		"subjects from metadata fields %s (a string, a number's JSON text, or each string of a list)",
		listPage, where, strings.Join(l.fields, ", "))
}

// Scan lists every record of the layer's namespaces page by page, fetches
// each page and calls fn with its records and the subjects their metadata
// names. The SDK's fetch returns the values too (it has no metadata-only
// fetch); they are dropped with the page. A record deleted between its
// page's list and fetch is not counted.
func (l *layer) Scan(ctx context.Context, fn func([]connector.Record) error) error {
	namespaces, err := l.namespaces(ctx)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := l.scanNamespace(ctx, ns, fn); err != nil {
			return err
		}
	}
	return nil
}

func (l *layer) scanNamespace(ctx context.Context, ns string, fn func([]connector.Record) error) error {
	conn := l.ix.namespace(ns)
	table := l.ix.name + "/" + extract.CanonicalNamespace(ns)
	limit := uint32(listPage)
	var token *string
	batch := make([]connector.Record, 0, listPage)
	for {
		page, err := conn.ListVectors(ctx, &pinecone.ListVectorsRequest{Limit: &limit, PaginationToken: token})
		if err != nil {
			return l.ix.failed("list", ns, err)
		}
		ids := make([]string, 0, len(page.VectorIds))
		for _, id := range page.VectorIds {
			if id != nil {
				ids = append(ids, *id)
			}
		}
		if len(ids) > 0 {
			res, err := conn.FetchVectors(ctx, ids)
			if err != nil {
				return l.ix.failed("fetch", ns, err)
			}
			batch = batch[:0]
			for _, id := range ids {
				if v := res.Vectors[id]; v != nil {
					batch = append(batch, connector.Record{Table: table, ID: id, Subjects: subjectsOf(v.Metadata, l.fields)})
				}
			}
			if len(batch) > 0 {
				if err := fn(batch); err != nil {
					return err
				}
			}
		}
		if page.NextPaginationToken == nil || *page.NextPaginationToken == "" {
			return nil
		}
		token = page.NextPaginationToken
	}
}
