package pcwing

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// restoreFlushEvery bounds how long a changed mark stays in memory only:
// marks are written at most this often (and at once on a restore), never
// on a write's path.
const restoreFlushEvery = 5 * time.Second

// restoreRun is the restore watch's background work, until stop.
type restoreRun struct {
	watch   *restoreWatch
	probers []*pcstore.Index
	stop    context.CancelFunc
	done    sync.WaitGroup
	stopped sync.Once
}

// newRestoreWatch makes the restore watch of the indexes with namespace
// rules (restore.go), or nil when the ledger keeps no store marks (logged:
// detection is off). Nothing is read until startRestoreWatch; forget's
// deletes report their LSNs to it from the start (openIndex).
func (w *Wing) newRestoreWatch() *restoreWatch {
	marks, ok := w.core.Ledger().(ledger.StoreMarks)
	if !ok {
		w.log.Warn("restore detection is off for Pinecone: the ledger keeps no store marks")
		return nil
	}
	hosts := map[string]string{}
	for _, ic := range w.settings.Indexes {
		if len(ic.Namespaces) == 0 {
			continue
		}
		if u, err := url.Parse(ic.Host); err == nil { // validated by config
			hosts[ic.Name] = u.Host
		}
	}
	return newRestoreWatch(marks, w.core, w.onRestore, hosts, w.settings.VerifyDeadline.D(), w.log.With("restore", "pinecone"))
}

// startRestoreWatch checks each index's host against its mark, before the
// relay binds, holding writes when a restore waits for replay; then, in
// the background, reads each known namespace's LSN at once and again every
// pinecone.scan_interval (when set), and records the
// marks every few seconds (capture.recovery_interval when shorter) until
// stopRestoreWatch. The relay's hook tells it each applied write's LSN.
func (w *Wing) startRestoreWatch() error {
	rw := w.restoreWatch
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := rw.checkHosts(ctx)
	cancel()
	if err != nil {
		return err
	}
	work, stop := context.WithCancel(context.Background())
	run := &restoreRun{watch: rw, stop: stop}
	for _, ic := range w.settings.Indexes {
		if rw.hosts[ic.Name] == "" {
			continue
		}
		var rules []string
		for _, r := range ic.Namespaces {
			if r.Namespace != "*" {
				rules = append(rules, r.Namespace)
			}
		}
		ix, err := w.openIndex(ic, nil)
		if err != nil {
			w.log.Warn("restore detection: this index's LSNs are not read at start (a write through the proxy still shows a restore)", "index", ic.Name, "err", err)
			continue
		}
		run.probers = append(run.probers, ix)
		run.done.Add(1)
		go func() {
			defer run.done.Done()
			rw.probeEvery(work, ic.Name, ix, rules, w.settings.ScanInterval.D())
		}()
	}
	every := min(restoreFlushEvery, w.recoveryInterval)
	run.done.Add(1)
	go func() {
		defer run.done.Done()
		rw.loop(work, every)
	}()
	w.restore = run
	w.hook.WatchLSN(rw)
	return nil
}

// forgetWrites is pcstore.Config.WatchWrite for index: forget's deletes
// are writes of the namespace's sequence like the application's.
func (rw *restoreWatch) forgetWrites(index string) func(ns string) func(uint64) {
	return func(ns string) func(uint64) {
		ns = extract.CanonicalNamespace(ns)
		floor := rw.Floor(index, ns)
		return func(lsn uint64) {
			rw.Applied(pcapture.AppliedWrite{Index: index, Namespace: ns, Floor: floor, RequestLSN: lsn, HasLSN: true})
		}
	}
}

// loop flushes every interval, and at once when a restore was seen, until
// ctx ends; then once more.
func (rw *restoreWatch) loop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := rw.flush(last); err != nil {
				rw.log.Warn("restore detection: recording the marks at stop failed", "err", err)
			}
			cancel()
			return
		case <-tick.C:
		case <-rw.kick:
		}
		if err := rw.flush(ctx); err != nil && ctx.Err() == nil {
			rw.log.Warn("restore detection: recording the marks failed; tried again at the next interval", "err", err)
		}
	}
}

// stopRestoreWatch stops the hook's reports, ends the background work,
// records the marks a last time and closes the probes' connections; later
// calls do nothing.
func (w *Wing) stopRestoreWatch() {
	run := w.restore
	if run == nil {
		return
	}
	run.stopped.Do(func() {
		w.hook.WatchLSN(nil)
		run.stop()
		run.done.Wait()
		closeAll(run.probers)
	})
}

// probeEvery probes index now, then every interval (none when 0) until
// ctx ends: an index restored while nothing writes through the proxy is
// seen at the next probe rather than at the next write.
func (rw *restoreWatch) probeEvery(ctx context.Context, index string, p lsnProber, ruleNamespaces []string, interval time.Duration) {
	rw.probe(ctx, index, p, ruleNamespaces)
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			rw.probe(ctx, index, p, ruleNamespaces)
		}
	}
}
