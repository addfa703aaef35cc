package pgwing

import (
	"context"
	"time"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// writersInterval is how often the store's catalog is read again for
// functions, procedures, triggers and rules that write configured tables;
// writersRetry, how soon after a failed read; catalogTimeout bounds the
// first read, at start.
const (
	writersInterval = time.Minute
	writersRetry    = 10 * time.Second
	catalogTimeout  = 30 * time.Second
)

// watchCatalog keeps capture's rules in step with the server-side writers
// of the store named by capture.store, and the views, partitions and
// inheritance children of configured tables: read now (a failure is
// logged and retried, not fatal: capture works without them, only blind
// to such writes), then every writersInterval until work ends, and after
// DDL passes through a session of the relay. Each read checks coverage
// too (docs/coverage.md): the wing's monitor logs what it finds, and with
// coverage.mode enforce the uncovered tables' writes are refused.
func (w *Wing) watchCatalog(work context.Context) {
	c := w.cfg.Capture
	if c.Store == "" {
		w.log.Info("writes made inside the database by functions, procedures, triggers and rules, and writes through views, partitions and inheritance children of configured tables, are not checked: capture.store is not set (DO blocks naming a configured table still are)")
		w.log.Info("coverage is not checked by the proxy: capture.store is not set (lethe-proxy check needs it too)")
		return
	}
	enforce := w.cfg.Coverage.Mode == config.CoverageEnforce
	monitor := coverage.NewMonitor(w.log, enforce)
	w.monitor = monitor
	var store *pgstore.Store // opened on first use, so that a store down at start is retried
	finder := w.compiled.Tables.WriterFinder()
	catalog := pgcapture.NewWriterCatalog(w.core, func(ctx context.Context) (extract.Writers, error) {
		if store == nil {
			s, err := OpenStore(ctx, c, "the proxy reads the catalog")
			if err != nil {
				return extract.Writers{}, err
			}
			store = s
		}
		found, tables, err := store.WritersAndCoverage(ctx, finder, w.compiled.CoverageSkip)
		if err != nil {
			return extract.Writers{}, err
		}
		findings := coverage.CheckTables(w.compiled.Coverage, tables)
		monitor.Observe(findings)
		if enforce {
			found.Uncovered = uncoveredRelations(findings, tables)
		}
		return found, nil
	})
	ctx, cancel := context.WithTimeout(work, catalogTimeout)
	err := catalog.Refresh(ctx)
	cancel()
	if err != nil {
		w.log.Warn("could not read the server-side writers of configured tables; calls of them are not refused until a retry succeeds",
			"err", err, "retry_in", writersRetry)
	}
	w.observer.FollowCatalog(catalog) // DDL through the proxy is read at once
	w.background.Add(1)
	go func() {
		defer w.background.Done()
		catalog.Watch(work, writersInterval, writersRetry)
		if store != nil {
			store.Close()
		}
	}()
}

// uncoveredRelations are the relations enforce refuses writes to, in
// extract.SortUncovered's order.
func uncoveredRelations(findings []coverage.Finding, tables []coverage.Table) []extract.UncoveredRelation {
	byName := make(map[string]coverage.Table, len(tables))
	for _, t := range tables {
		byName[t.FullName()] = t
	}
	var out []extract.UncoveredRelation
	for rel, table := range coverage.Uncovered(findings, tables) {
		t := byName[rel]
		out = append(out, extract.UncoveredRelation{Schema: t.Schema, Name: t.Name, Table: table})
	}
	extract.SortUncovered(out)
	return out
}
