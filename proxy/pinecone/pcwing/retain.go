package pcwing

import (
	"context"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Retainers opens each index with a namespace rule that has retain and
// returns one retainer per such rule, with its retain and retain_by; the
// closer closes the index connections. An index without retain is not
// opened.
func (w *Wing) Retainers(context.Context) ([]connector.Expiring, func(), error) {
	var (
		out     []connector.Expiring
		indexes []*pcstore.Index
	)
	for _, ic := range w.settings.Indexes {
		retain := map[string]config.NamespaceRule{} // by the retainer's name
		for _, r := range ic.Namespaces {
			if r.Retain > 0 {
				retain[ic.Name+"/"+extract.CanonicalNamespace(r.Namespace)] = r
			}
		}
		if len(retain) == 0 {
			continue
		}
		ix, err := w.openIndex(ic, nil)
		if err != nil {
			closeAll(indexes)
			return nil, nil, err
		}
		indexes = append(indexes, ix)
		for _, r := range ix.Retainers(rules(ic)) {
			rule := retain[r.Name()]
			out = append(out, connector.Expiring{Retainer: r, Retain: rule.Retain.D(), RetainBy: rule.RetainBy})
		}
	}
	return out, func() { closeAll(indexes) }, nil
}
