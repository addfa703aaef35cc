package pcstore

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
	if l.ix.docs != nil {
		return fmt.Sprintf("POST /namespaces/{namespace}/documents/list page by page (%d ids) in %s, documents fetch of each page's ids "+
			"with include_fields %s; subjects from those fields (a string, a number's JSON text, or each string of a list)",
			listPage, strings.Replace(where, "describe_index_stats", "GET /namespaces", 1), strings.Join(l.fields, ", "))
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
	table := l.ix.name + "/" + extract.CanonicalNamespace(ns)
	batch := make([]connector.Record, 0, listPage)
	return l.ix.eachPage(ctx, ns, l.fields, func(page []*pinecone.Vector) error {
		batch = batch[:0]
		for _, v := range page {
			batch = append(batch, connector.Record{Table: table, ID: v.Id, Subjects: subjectsOf(v.Metadata, l.fields)})
		}
		return fn(batch)
	})
}
