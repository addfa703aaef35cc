package pgwing

import (
	"context"
	"fmt"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// Scanners opens capture.store and returns a scanner per configured
// table, in the config's order, for reconcile; the closer closes the
// connection. Without capture.tables it opens nothing.
func (w *Wing) Scanners(ctx context.Context) ([]connector.Scanner, func(), error) {
	c := w.cfg.Capture
	if len(c.Tables) == 0 {
		return nil, func() {}, nil
	}
	store, err := OpenStore(ctx, c, "reconcile reads the tables")
	if err != nil {
		return nil, nil, err
	}
	var out []connector.Scanner
	for _, t := range c.Tables {
		name, err := extract.CanonicalTable(t.Table)
		if err != nil {
			store.Close()
			return nil, nil, err
		}
		st, ok := w.compiled.Tables.Stored(name)
		if !ok {
			store.Close()
			return nil, nil, fmt.Errorf("capture.tables %s: no compiled rule", t.Table)
		}
		out = append(out, store.Scanner(st))
	}
	return out, store.Close, nil
}

// Retainers opens capture.store when a configured table has retain and
// returns one retainer per such table, with its retain and retain_by, for
// the sweep; the closer closes the connection. Without retain it opens
// nothing.
func (w *Wing) Retainers(ctx context.Context) ([]connector.Expiring, func(), error) {
	var (
		out   []connector.Expiring
		store *pgstore.Store
	)
	closeStore := func() {
		if store != nil {
			store.Close()
		}
	}
	for _, t := range w.cfg.Capture.Tables {
		if t.Retain == 0 {
			continue
		}
		if store == nil {
			s, err := OpenStore(ctx, w.cfg.Capture, "capture.tables "+t.Table+" has retain, and the sweep deletes")
			if err != nil {
				return nil, nil, err
			}
			store = s
		}
		pt, err := pgstore.ParseTable(t.Table, t.ID, t.Subjects)
		if err != nil {
			closeStore()
			return nil, nil, err
		}
		by, err := extract.ParseSubject(t.RetainBy)
		if err != nil {
			closeStore()
			return nil, nil, fmt.Errorf("capture.tables %s: retain_by %q: %w", t.Table, t.RetainBy, err)
		}
		r := pgstore.NewRetention(store, pt, pgstore.Subject{Column: by.Column, Path: by.Path}, t.Vacuum)
		out = append(out, connector.Expiring{Retainer: r, Retain: t.Retain.D(), RetainBy: t.RetainBy})
	}
	return out, closeStore, nil
}

// Coverage reads the catalog of capture.store's database (never a row)
// and judges its tables by p, for lethe-proxy check. The connection is
// closed before it returns.
func (w *Wing) Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error) {
	store, err := OpenStore(ctx, w.cfg.Capture, "check reads the database's catalog")
	if err != nil {
		return coverage.Report{}, err
	}
	defer store.Close()
	tables, err := store.CoverageTables(ctx, w.compiled.CoverageSkip)
	if err != nil {
		return coverage.Report{}, err
	}
	return coverage.Report{TablesChecked: len(tables), Findings: coverage.CheckTables(p, tables)}, nil
}
