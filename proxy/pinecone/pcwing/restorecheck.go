package pcwing

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// lsnProber reads what restore detection asks an index host:
// *pcstore.Index.
type lsnProber interface {
	Namespaces(ctx context.Context) ([]string, error)
	IndexedLSN(ctx context.Context, ns string) (lsn uint64, ok bool, err error)
}

// checkHosts compares each index's configured host with the one its mark
// recorded, records it, and holds writes when a restore waits for replay
// (one recorded before, or the host changed).
func (rw *restoreWatch) checkHosts(ctx context.Context) error {
	for index, host := range rw.hosts {
		seen, ok, err := rw.marks.StoreSeen(ctx, indexKey(index))
		if err != nil {
			return fmt.Errorf("restore detection: reading what the ledger saw of pinecone index %q: %w", index, err)
		}
		now := ledger.StoreSeen{System: host, Restore: seen.Restore}
		if ok && now.Restore == "" && seen.System != "" && seen.System != host {
			now.Restore = fmt.Sprintf("pinecone index %q's host changed from %s to %s (another index answers under this name, e.g. one created from a backup)",
				index, seen.System, host)
		}
		if !ok || now.System != seen.System || now.Restore != seen.Restore {
			if err := rw.marks.RecordStoreSeen(ctx, indexKey(index), now); err != nil {
				return fmt.Errorf("restore detection: recording what was seen of pinecone index %q: %w", index, err)
			}
		}
		if now.Restore != "" {
			rw.mu.Lock()
			im := rw.index(index)
			im.restore, im.recorded = now.Restore, true
			rw.apply(now.Restore)
			rw.mu.Unlock()
		}
	}
	return nil
}

// probe reads the max indexed LSN of each namespace of index it knows
// (rule namespaces and those the index lists; the default one when there
// are none, to learn whether the index sends LSNs at all). A namespace
// without a mark gets one; one whose reads are behind its mark is read
// again confirmAfter later, and a restore if it still is. It returns when
// done or ctx ends; failures are logged.
func (rw *restoreWatch) probe(ctx context.Context, index string, p lsnProber, ruleNamespaces []string) {
	namespaces := map[string]bool{}
	for _, ns := range ruleNamespaces {
		namespaces[extract.CanonicalNamespace(ns)] = true
	}
	listed, err := p.Namespaces(ctx)
	if err != nil {
		rw.log.Warn("restore detection: listing the index's namespaces failed; only rule namespaces are read at start", "index", index, "err", err)
	}
	for _, ns := range listed {
		namespaces[ns] = true
	}
	if len(namespaces) == 0 {
		namespaces[extract.DefaultNamespace] = true
	}
	behind := map[string]uint64{} // namespace → the mark its read was behind
	for ns := range namespaces {
		k := spaceKey{index, ns}
		if err := rw.load(ctx, k); err != nil {
			rw.log.Warn("restore detection: reading a namespace's mark failed", "index", index, "err", err)
			continue
		}
		lsn, ok, err := p.IndexedLSN(ctx, ns)
		switch {
		case err != nil:
			rw.log.Warn("restore detection: reading a namespace's LSN failed; a write through the proxy still shows a restore", "index", index, "err", err)
			continue
		case !ok:
			rw.noLSN(index, "its reads carry no x-pinecone-max-indexed-lsn")
			return
		}
		if mark := rw.readAhead(k, lsn); mark > 0 {
			behind[ns] = mark
		}
	}
	if len(behind) == 0 {
		return
	}
	// A replica may answer before it indexed the latest writes: read
	// again once the lag the operator accepts (pinecone.verify_deadline)
	// has passed.
	select {
	case <-ctx.Done():
		return
	case <-time.After(rw.confirmAfter):
	}
	for ns, mark := range behind {
		lsn, ok, err := p.IndexedLSN(ctx, ns)
		if err != nil || !ok {
			rw.log.Warn("restore detection: reading a namespace's LSN again failed", "index", index, "err", err)
			continue
		}
		k := spaceKey{index, ns}
		if lsn >= mark {
			rw.readAhead(k, lsn)
			continue
		}
		rw.mu.Lock()
		if m := rw.space(k); m.restore == "" {
			rw.restored(index, ns, m, fmt.Sprintf("index %q namespace %q reports max indexed LSN %d, behind LSN %d recorded before, and still did %s later "+
				"(the index was deleted and created again, or restored)", index, ns, lsn, mark, rw.confirmAfter), lsn)
		}
		rw.mu.Unlock()
	}
}

// readAhead takes a read's LSN of namespace k: a mark at or below it rises
// to it (a namespace without a mark gets its first); a mark above it is
// returned, and left as it is.
func (rw *restoreWatch) readAhead(k spaceKey, lsn uint64) (behindOf uint64) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	m := rw.space(k)
	if lsn < m.high {
		return m.high
	}
	if lsn > m.high {
		m.high, m.dirty, m.gen = lsn, true, m.gen+1
	}
	return 0
}

// flush records the marks that changed, reads back the restores waiting
// for replay, and releases Pinecone's writes once replay cleared them all.
func (rw *restoreWatch) flush(ctx context.Context) error {
	if err := rw.flushIndexes(ctx); err != nil {
		return err
	}
	if err := rw.flushSpaces(ctx); err != nil {
		return err
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if !rw.pending() && rw.core.Release(ledger.StorePinecone) {
		rw.log.Info("restore detection: lethe-proxy replay ran; Pinecone writes are relayed again")
	}
	return nil
}

// flushIndexes records each index's restore once, and clears it, with its
// namespaces', once replay cleared it in the ledger.
func (rw *restoreWatch) flushIndexes(ctx context.Context) error {
	rw.mu.Lock()
	var names []string
	for name, im := range rw.indexes {
		if im.dirty || im.recorded {
			names = append(names, name)
		}
	}
	rw.mu.Unlock()
	for _, name := range names {
		seen, _, err := rw.marks.StoreSeen(ctx, indexKey(name))
		if err != nil {
			return fmt.Errorf("restore detection: reading what the ledger saw of pinecone index %q: %w", name, err)
		}
		rw.mu.Lock()
		im := rw.indexes[name]
		if im.recorded && !im.dirty && seen.Restore == "" { // lethe-proxy replay ran
			im.restore, im.recorded = "", false
			for k, m := range rw.spaces {
				if k.index == name && m.restore != "" {
					m.restore, m.dirty, m.gen = "", true, m.gen+1
				}
			}
		}
		write, now := im.dirty, ledger.StoreSeen{System: rw.hosts[name], Restore: im.restore}
		rw.mu.Unlock()
		if !write {
			continue
		}
		if err := rw.marks.RecordStoreSeen(ctx, indexKey(name), now); err != nil {
			return fmt.Errorf("restore detection: recording pinecone index %q's restore: %w", name, err)
		}
		rw.mu.Lock()
		if im.restore == now.Restore {
			im.dirty, im.recorded = false, im.restore != ""
		}
		rw.mu.Unlock()
	}
	return nil
}

// flushSpaces records the namespaces' marks that changed. A mark another
// proxy raised in a shared ledger is kept, unless this one lowered it.
func (rw *restoreWatch) flushSpaces(ctx context.Context) error {
	type change struct {
		k     spaceKey
		high  uint64
		reset bool
		why   string
		gen   uint64
	}
	var changes []change
	rw.mu.Lock()
	for k, m := range rw.spaces {
		if m.dirty {
			changes = append(changes, change{k, m.high, m.reset, m.restore, m.gen})
		}
	}
	rw.mu.Unlock()
	for _, c := range changes {
		seen, ok, err := rw.marks.StoreSeen(ctx, c.k.key())
		if err != nil {
			return fmt.Errorf("restore detection: reading the mark of pinecone index %q: %w", c.k.index, err)
		}
		host := rw.hosts[c.k.index]
		now := ledger.StoreSeen{System: host, WAL: c.high, Restore: c.why}
		if ok && !c.reset && seen.System == host {
			now.WAL = max(now.WAL, seen.WAL)
		}
		if !ok || now.System != seen.System || now.WAL != seen.WAL || now.Restore != seen.Restore {
			if err := rw.marks.RecordStoreSeen(ctx, c.k.key(), now); err != nil {
				return fmt.Errorf("restore detection: recording the mark of pinecone index %q: %w", c.k.index, err)
			}
		}
		rw.mu.Lock()
		if m := rw.spaces[c.k]; m.gen == c.gen {
			m.dirty, m.reset = false, false
		}
		rw.mu.Unlock()
	}
	return nil
}
