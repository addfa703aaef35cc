package pcstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// Rule names the metadata fields holding the subject of the records of one
// namespace ("", "__default__" and no namespace are the same one), or of
// every other namespace (pcextract.AnyNamespace).
type Rule struct {
	Namespace string
	Fields    []string
	// RetainBy is the metadata field holding a record's time in seconds
	// since the Unix epoch, when the rule has retain (see Retainers).
	RetainBy string
}

// Layers returns one forget layer per rule, in order: a *Layer for a
// namespace, an *AnyLayer for pcextract.AnyNamespace.
func (ix *Index) Layers(rules []Rule) ([]connector.Layer, error) {
	own := map[string]bool{}
	for _, r := range rules {
		if len(r.Fields) == 0 || slices.Contains(r.Fields, "") {
			return nil, fmt.Errorf("pinecone: index %q namespace %q: name the metadata fields holding the subject", ix.name, r.Namespace)
		}
		ns := extract.CanonicalNamespace(r.Namespace)
		if own[ns] {
			return nil, fmt.Errorf("pinecone: index %q has two rules for namespace %q; merge them", ix.name, ns)
		}
		own[ns] = true
	}
	delete(own, pcextract.AnyNamespace)
	var out []connector.Layer
	for _, r := range rules {
		l := &layer{ix: ix, fields: slices.Clone(r.Fields)}
		if ns := extract.CanonicalNamespace(r.Namespace); ns != pcextract.AnyNamespace {
			l.namespace = ns
			out = append(out, &Layer{l})
			continue
		}
		l.except = own
		out = append(out, &AnyLayer{l})
	}
	return out, nil
}

// Layer is one namespace of an index, named "<index>/<namespace>" as
// capture names its records in the ledger.
type Layer struct{ *layer }

// AnyLayer is an index's "*" rule, named "<index>/*": every namespace
// without a rule of its own, as listed by describe_index_stats when forget
// runs. It is a connector.Scoped layer: the engine gives it the ledger's ids
// of every such namespace. Ids are looked for in each namespace, which is
// safe since only records whose metadata names the subject are deleted.
type AnyLayer struct{ *layer }

var (
	_ connector.Layer  = (*Layer)(nil)
	_ connector.Scoped = (*AnyLayer)(nil)
)

// Holds reports whether table ("<index>/<namespace>") is a namespace of
// this index without a rule of its own.
func (l *AnyLayer) Holds(table string) bool {
	ns, ok := strings.CutPrefix(table, l.ix.name+"/")
	return ok && ns != pcextract.AnyNamespace && !l.except[extract.CanonicalNamespace(ns)]
}

// layer is what both kinds share: namespace is "" for an AnyLayer.
type layer struct {
	ix        *Index
	namespace string
	except    map[string]bool // AnyLayer: the namespaces with their own rule
	fields    []string
}

func (l *layer) Store() ledger.Store { return ledger.StorePinecone }

func (l *layer) Name() string {
	if l.namespace == "" {
		return l.ix.name + "/" + pcextract.AnyNamespace
	}
	return l.ix.name + "/" + l.namespace
}

// namespaces is where the layer looks now: its own, or every namespace
// the index lists without a rule of its own.
func (l *layer) namespaces(ctx context.Context) ([]string, error) {
	if l.namespace != "" {
		return []string{l.namespace}, nil
	}
	all, _, err := l.ix.stats(ctx)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(all, func(ns string) bool { return l.except[ns] })
	slices.Sort(out)
	return out, nil
}

// Matching returns the ids of the subject's records present now (an id in
// two namespaces of an AnyLayer counts twice).
func (l *layer) Matching(ctx context.Context, subject string, ids []string) ([]string, error) {
	namespaces, err := l.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range namespaces {
		found, err := l.ix.search(ctx, ns, l.fields, subject, ids)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// Delete deletes the subject's records present now by id, in chunks;
// beforeCommit journals each chunk before its delete is sent.
func (l *layer) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	namespaces, err := l.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, ns := range namespaces {
		found, err := l.ix.search(ctx, ns, l.fields, subject, ids)
		if err != nil {
			return deleted, err
		}
		for chunk := range slices.Chunk(found, chunkSize) {
			if err := beforeCommit(chunk); err != nil {
				return deleted, err
			}
			if err := l.ix.deleteIDs(ctx, ns, chunk); err != nil {
				return deleted, err
			}
			deleted = append(deleted, chunk...)
		}
	}
	return deleted, nil
}

// Cleanup does nothing: Pinecone frees deleted records itself.
func (l *layer) Cleanup(context.Context) error { return nil }
