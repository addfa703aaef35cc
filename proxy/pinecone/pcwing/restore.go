package pcwing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

// Restore detection. An index deleted and created again under its name,
// or another index (one created from a backup) put behind the configured
// host, may hold records of subjects forgotten since. The wing records in
// the ledger's store marks what it saw of each index, and compares:
//
//   - the index's host (mark "pinecone://<index>", System): the
//     configured host changed since the last run, so another index
//     answers under this name. Pinecone restores a backup only into a new
//     index, with a new name and host (its "Restore an index" guide); the
//     control plane's describe-index answer carries nothing else that
//     tells one incarnation of a name from the next (name, host,
//     dimension, metric, spec, status, tags; no id, no creation time).
//   - each namespace's log sequence number (mark
//     "pinecone://<index>/<namespace>", WAL): Pinecone numbers the writes
//     of each namespace in one increasing sequence ("Writes to one
//     namespace do not increase the LSN for other namespaces", its "Check
//     data freshness" guide), and a new index starts a new one.
//
// What counts as behind, like with like:
//
//   - a write's x-pinecone-request-lsn below the highest request LSN the
//     wing had read before that write was sent (pcapture.LSNWatch's
//     floor). Writes answered out of order are no signal: a write sent
//     before an answer was read may get a lower number. Writes to other
//     namespaces are never compared.
//   - a read's x-pinecone-max-indexed-lsn (the start's probe, one list
//     of one id per namespace) below the namespace's recorded mark, and
//     still below it when read again pinecone.verify_deadline later. A
//     replica may answer a read before it has indexed the latest writes
//     (normal lag); once the operator's bound on that lag has passed, a
//     read below what was written before is another sequence.
//
// A namespace emptied through the proxy (deleteAll, a namespace delete)
// starts afresh: Pinecone does not say whether a namespace written again
// continues its sequence. An index whose answers carry no LSN headers
// gives no LSN signal, which the log says once.
//
// On a signal the wing records Restore on the namespace's mark and on the
// index's, logs an error and, with capture.on_restore: refuse, holds
// every Pinecone write (capture.Hold, LT006) until lethe-proxy replay
// cleared the marks (ledger.StoreMarks.ClearRestores), which the wing
// reads back every few seconds.
type restoreWatch struct {
	marks     ledger.StoreMarks
	core      *capture.Capture
	onRestore config.OnRestore
	log       *slog.Logger
	hosts     map[string]string // index name → its configured host (host[:port])
	// confirmAfter is how long a read behind the mark must stay behind
	// to count (pinecone.verify_deadline).
	confirmAfter time.Duration
	// kick asks the flush loop to record a restore now.
	kick chan struct{}

	mu      sync.Mutex
	indexes map[string]*indexMark // by index name
	spaces  map[spaceKey]*spaceMark
}

// spaceKey names one namespace (canonical) of one index.
type spaceKey struct{ index, ns string }

// indexMark is what the wing knows of one index's identity.
type indexMark struct {
	restore  string // waiting for replay; "" when none
	recorded bool   // restore is in the ledger
	dirty    bool   // restore changed since it was recorded
	noLSN    bool   // the log said that the index's answers carry no LSN
}

// spaceMark is the high-water mark of one namespace's LSNs.
type spaceMark struct {
	loaded bool   // the ledger's mark was read
	high   uint64 // the highest LSN known for the namespace's sequence
	// reset: high was lowered (a restore, a namespace emptied): the next
	// flush writes it as it is instead of keeping a higher mark.
	reset   bool
	restore string
	dirty   bool
	gen     uint64 // counts changes, so a flush knows what it wrote
}

// indexKey and spaceKey's key name marks in the ledger: the index's name
// and namespace, never its host's credentials or the API key.
func indexKey(index string) string { return "pinecone://" + index }
func (k spaceKey) key() string     { return "pinecone://" + k.index + "/" + k.ns }

func newRestoreWatch(marks ledger.StoreMarks, core *capture.Capture, onRestore config.OnRestore, hosts map[string]string,
	confirmAfter time.Duration, log *slog.Logger) *restoreWatch {
	return &restoreWatch{marks: marks, core: core, onRestore: onRestore, log: log, hosts: hosts, confirmAfter: confirmAfter,
		kick: make(chan struct{}, 1), indexes: map[string]*indexMark{}, spaces: map[spaceKey]*spaceMark{}}
}

var _ pcapture.LSNWatch = (*restoreWatch)(nil)

// Floor implements pcapture.LSNWatch. The first write to a namespace
// reads its mark from the ledger (once per namespace and process; a
// failed read is logged and tried again by the next write).
func (rw *restoreWatch) Floor(index, ns string) uint64 {
	k := spaceKey{index, ns}
	rw.mu.Lock()
	m := rw.space(k)
	loaded, high := m.loaded, m.high
	rw.mu.Unlock()
	if loaded {
		return high
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rw.load(ctx, k); err != nil {
		rw.log.Warn("restore detection: reading a namespace's mark failed; it is read again at the next write", "index", index, "err", err)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return m.high
}

// space returns k's mark, made on first use; rw.mu is held.
func (rw *restoreWatch) space(k spaceKey) *spaceMark {
	m := rw.spaces[k]
	if m == nil {
		m = &spaceMark{}
		rw.spaces[k] = m
	}
	return m
}

// load reads k's mark from the ledger once: a mark recorded under another
// host is another index's, and ignored.
func (rw *restoreWatch) load(ctx context.Context, k spaceKey) error {
	seen, ok, err := rw.marks.StoreSeen(ctx, k.key())
	if err != nil {
		return err
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	m := rw.space(k)
	if m.loaded {
		return nil
	}
	m.loaded = true
	if ok && seen.System == rw.hosts[k.index] && !m.reset {
		m.high = max(m.high, seen.WAL)
	}
	return nil
}

// Applied implements pcapture.LSNWatch.
func (rw *restoreWatch) Applied(w pcapture.AppliedWrite) {
	if !w.HasLSN {
		rw.noLSN(w.Index, "its write answers carry no x-pinecone-request-lsn")
		return
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	m := rw.space(spaceKey{w.Index, w.Namespace})
	m.dirty, m.gen = true, m.gen+1
	switch {
	case w.Cleared:
		m.high, m.reset = 0, true
	// A floor above the mark was given before the mark was lowered (a
	// restore seen, a namespace emptied): it belongs to the old sequence.
	case w.RequestLSN < w.Floor && w.Floor <= m.high && m.restore == "":
		rw.restored(w.Index, w.Namespace, m, fmt.Sprintf("a write to index %q namespace %q was given LSN %d, behind LSN %d read before it was sent "+
			"(the index was deleted and created again, or restored)", w.Index, w.Namespace, w.RequestLSN, w.Floor), w.RequestLSN)
	default:
		m.high = max(m.high, w.RequestLSN)
	}
}

// restored records a restore of namespace m of index (whose sequence is
// now at lsn) and holds or warns; rw.mu is held.
func (rw *restoreWatch) restored(index, ns string, m *spaceMark, reason string, lsn uint64) {
	m.restore, m.high, m.reset, m.dirty, m.gen = reason, lsn, true, true, m.gen+1
	im := rw.index(index)
	if im.restore == "" {
		im.restore, im.dirty = reason, true
	}
	rw.apply(reason)
	select {
	case rw.kick <- struct{}{}:
	default:
	}
}

// index returns index's mark, made on first use; rw.mu is held.
func (rw *restoreWatch) index(name string) *indexMark {
	im := rw.indexes[name]
	if im == nil {
		im = &indexMark{}
		rw.indexes[name] = im
	}
	return im
}

// noLSN logs once per index that its LSN signal is off.
func (rw *restoreWatch) noLSN(index, why string) {
	rw.mu.Lock()
	im := rw.index(index)
	logged := im.noLSN
	im.noLSN = true
	rw.mu.Unlock()
	if !logged {
		rw.log.Warn("restore detection by LSN is off for this index: "+why+
			" (an older API version, or a gateway that strips the header); a changed host is still detected", "index", index)
	}
}

// apply holds Pinecone's writes for restore (capture.on_restore: refuse)
// or warns.
func (rw *restoreWatch) apply(restore string) {
	rw.core.RestoreSeen(capture.Restore{
		Store: ledger.StorePinecone, Signal: restore,
		Happened:  "a Pinecone index was re-created or restored",
		Writes:    "Pinecone writes",
		Message:   "lethe: a Pinecone index was re-created or restored from a backup (" + restore + "); writes to namespaces under erasure rules are refused until the completed erasures are re-applied",
		LogReason: "index restored, replay pending",
	}, rw.onRestore.Refuses())
}

// pending reports whether a restore waits for replay; rw.mu is held.
func (rw *restoreWatch) pending() bool {
	for _, im := range rw.indexes {
		if im.restore != "" {
			return true
		}
	}
	return false
}

// ForgetMarks resets what the ledger saw of index: its host and the LSNs
// of namespaces. It is for an index new and empty by construction, whose
// re-creation is no restore: the demo's in-memory emulator, started
// afresh at every run under the same ledger. Anything else re-created
// goes through restore detection and lethe-proxy replay.
func ForgetMarks(ctx context.Context, marks ledger.StoreMarks, index string, namespaces []string) error {
	keys := []string{indexKey(index)}
	for _, ns := range namespaces {
		keys = append(keys, spaceKey{index: index, ns: extract.CanonicalNamespace(ns)}.key())
	}
	for _, key := range keys {
		if err := marks.RecordStoreSeen(ctx, key, ledger.StoreSeen{}); err != nil {
			return fmt.Errorf("resetting what the ledger saw of pinecone index %q: %w", index, err)
		}
	}
	return nil
}
