package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// layerKey names a layer: its store and its name.
type layerKey struct {
	store ledger.Store
	name  string
}

// finds are the records of one forgotten subject that a scan found in one
// layer: their ids and the subject's spellings as stored (its text, held
// in memory only, never logged or returned).
type finds struct {
	records  int64
	ids      []string
	tables   []string // the ledger tables the records are in
	seen     map[string]bool
	subjects map[string]bool
}

// findForgotten reads every record of every scanner and collects, per
// forgotten subject and layer, the records that name it.
func findForgotten(ctx context.Context, cfg Config, forgotten map[ledger.SubjectHash]string) (map[ledger.SubjectHash]map[layerKey]*finds, error) {
	out := map[ledger.SubjectHash]map[layerKey]*finds{}
	if len(forgotten) == 0 {
		return out, nil
	}
	for _, s := range cfg.Scanners {
		err := s.Scan(ctx, func(batch []connector.Record) error {
			for _, rec := range batch {
				for _, subject := range rec.Subjects {
					h := cfg.Hasher.Hash(subject)
					if _, ok := forgotten[h]; !ok {
						continue
					}
					k, ok := layerOf(cfg.Layers, s.Store(), rec.Table)
					if !ok {
						return fmt.Errorf("replay: records of %s %s have no forget layer; check that its rule is configured as for forget", s.Store(), rec.Table)
					}
					byLayer := out[h]
					if byLayer == nil {
						byLayer = map[layerKey]*finds{}
						out[h] = byLayer
					}
					f := byLayer[k]
					if f == nil {
						f = &finds{seen: map[string]bool{}, subjects: map[string]bool{}}
						byLayer[k] = f
					}
					f.subjects[subject] = true
					if !slices.Contains(f.tables, rec.Table) {
						f.tables = append(f.tables, rec.Table)
					}
					if key := rec.Table + "\x00" + rec.ID; !f.seen[key] {
						f.seen[key] = true
						f.records++
						if rec.ID != "" {
							f.ids = append(f.ids, rec.ID)
						}
					}
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, connector.ErrAbsent) {
			return nil, fmt.Errorf("replay: reading %s %s: %w", s.Store(), s.Name(), err)
		}
	}
	return out, nil
}

// layerOf is the layer that holds table of store: the one named like it,
// else a connector.Scoped layer that holds it.
func layerOf(layers []connector.Layer, store ledger.Store, table string) (layerKey, bool) {
	for _, l := range layers {
		if l.Store() == store && l.Name() == table {
			return layerKey{store, l.Name()}, true
		}
	}
	for _, l := range layers {
		if sc, ok := l.(connector.Scoped); ok && l.Store() == store && sc.Holds(table) {
			return layerKey{store, l.Name()}, true
		}
	}
	return layerKey{}, false
}
