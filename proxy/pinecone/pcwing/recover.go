package pcwing

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// recoveryTimeout bounds the recovery a start waits for.
const recoveryTimeout = 5 * time.Minute

// recovery resolves the Pinecone intents that dead ledger handles left
// pending (a crash mid-write, or a write whose answer never came), as
// pgwing does for PostgreSQL: it fetches their records by id from the
// index host; an intent one of whose records is present is confirmed,
// one none of whose records is present after pinecone.verify_deadline
// (Pinecone may show a write late) is dropped, and the rest stay pending
// (forget treats them as candidates) for the next run.
type recovery struct {
	indexes map[string]*pcstore.Index // by index name
	check   capture.StoreCheck

	mu   sync.Mutex
	stop context.CancelFunc // ends the background runs
	done chan struct{}      // closed when they have ended
}

// startRecovery runs recovery once (a failure is logged: the intents stay
// pending and forget treats their records as candidates, so nothing is
// lost by starting) and then every capture.recovery_interval in the
// background until stopRecovery. Indexes without an API key for their
// https host are left out, and logged: their intents stay pending.
func (w *Wing) startRecovery() {
	rec := &recovery{indexes: map[string]*pcstore.Index{}}
	for _, ic := range w.settings.Indexes {
		if len(ic.Namespaces) == 0 {
			continue
		}
		ix, err := w.openIndex(ic, nil)
		if err != nil {
			w.log.Warn("pending Pinecone intents of this index are not resolved by recovery (forget treats them as candidates)", "index", ic.Name, "err", err)
			continue
		}
		rec.indexes[ic.Name] = ix
	}
	if len(rec.indexes) == 0 {
		return
	}
	absentAfter := w.settings.VerifyDeadline.D()
	rec.check = capture.StoreCheck{Store: ledger.StorePinecone, IDColumn: rec.holds, Checker: rec, AbsentAfter: absentAfter}
	l := w.core.Ledger()
	ctx, cancel := context.WithTimeout(context.Background(), recoveryTimeout)
	st, err := capture.RecoverFrom(ctx, l, rec.check)
	cancel()
	if err != nil {
		w.log.Warn("recovering pending Pinecone intents failed; retrying every capture.recovery_interval (forget treats them as candidates meanwhile)", "err", err)
	} else {
		w.log.Info("pending Pinecone intents recovered", "confirmed", st.Confirmed, "dropped", st.Dropped,
			"left_pending", st.LeftPending, "raced", st.Raced)
	}
	work, stop := context.WithCancel(context.Background())
	rec.stop, rec.done = stop, make(chan struct{})
	w.recovery = rec
	go func() {
		defer close(rec.done)
		capture.RecoverFromEvery(work, w.recoveryInterval, l, rec.check, w.log.With("recovery", "pinecone"))
	}()
}

// stopRecovery ends the background runs, waits for them, and closes the
// recovery's index connections; later calls do nothing.
func (w *Wing) stopRecovery() {
	rec := w.recovery
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.stop == nil {
		return
	}
	rec.stop()
	<-rec.done
	rec.stop = nil
	for _, ix := range rec.indexes {
		ix.Close()
	}
}

// holds reports whether table, "<index>/<namespace>", is of an index the
// recovery reaches (the id column means nothing to Pinecone).
func (r *recovery) holds(table string) (string, bool) {
	name, _, ok := strings.Cut(table, "/")
	return "", ok && r.indexes[name] != nil
}

// Existing implements capture.Checker for tables "<index>/<namespace>".
func (r *recovery) Existing(ctx context.Context, table, _ string, ids []string) (map[string]bool, error) {
	name, ns, _ := strings.Cut(table, "/")
	ix := r.indexes[name]
	if ix == nil {
		return nil, fmt.Errorf("pinecone index %q is not configured", name)
	}
	return ix.Existing(ctx, ns, ids)
}
