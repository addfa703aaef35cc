package pcwing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Bounds of one settle.
const (
	// settlePage is how many of the ledger's ids one page reads, and
	// fetches (Pinecone's largest fetch).
	settlePage = 1000
	// settleMaxRecords caps the records one settle reads: 100 fetches.
	// The ledger's records of the namespace past it stay present until the
	// next settle reads them (forget treats them as candidates meanwhile).
	settleMaxRecords = 100_000
	// settleFirstBackoff and settleMaxBackoff space the reads of a page
	// whose LSN has not yet reached the delete's.
	settleFirstBackoff = 100 * time.Millisecond
	settleMaxBackoff   = 2 * time.Second
)

// settler brings the ledger in line with the application's deletes by
// metadata filter, which name no ids (and with any delete of a
// namespace's records whose outcome is unknown; pcapture.FilterDelete):
// once one succeeds, the records of
// its namespace that the ledger holds present are fetched by id from the
// index host, page by page, and those the index no longer holds are
// marked deleted, off the request path.
//
// When absence counts. With LSN headers (the delete's answer carried
// x-pinecone-request-lsn and every read x-pinecone-max-indexed-lsn), a
// page's absences count once its reads have indexed past the delete's
// LSN; the page is read again with backoff until then, and a page not
// caught up within pinecone.verify_deadline fails the settle. Without
// them, the settle first waits pinecone.verify_deadline after the
// delete's answer, as recovery waits before trusting an absence, then
// reads each page once.
//
// Why a later write is never undone: only records none of whose subjects
// was confirmed at or after FilterDelete.Since are marked
// (ledger.Settler.MarkDeletedUnlessConfirmedSince). By Since the capture
// core had committed the confirmations of every write answered before
// the delete reached the proxy, and it commits those of writes answered
// later after it: a write the store may have applied after the delete is
// left alone however late the read saw it. The times are clocks of the
// proxies: with a PostgreSQL ledger shared by several proxies, a write
// through another proxy is confirmed by that proxy's clock, so their
// clocks must agree (NTP) to well within a write's round trip, or a
// record written again through another proxy, and absent from a read
// that missed it, may be marked deleted though present; forget still
// finds it, since it searches the index by the subject's metadata as
// well as by the ledger's ids.
//
// Bounds: one pending settle per namespace (later deletes merge into it:
// the latest time, the highest LSN), at most settleMaxRecords read per
// settle, fetches paced at pinecone.scan_rate (sharing the backstop's
// pacer when it runs). A settle that fails (the ledger or the index
// unreachable, the LSN not caught up) is logged without ids or subjects,
// counted, and retried at the next filter delete in its namespace or
// after capture.recovery_interval. Settles run one at a time, until halt.
type settler struct {
	ledger      ledger.Settler
	indexes     map[string]*pcstore.Index // by index name
	owned       []*pcstore.Index          // opened here, closed by halt
	absentAfter time.Duration             // pinecone.verify_deadline
	retry       time.Duration             // capture.recovery_interval
	maxRecords  int                       // settleMaxRecords; smaller in tests
	log         *slog.Logger

	mu      sync.Mutex
	queued  map[string]*settleJob // by table; at most one each
	wake    chan struct{}         // a job was queued; capacity 1
	stop    context.CancelFunc
	done    chan struct{}
	stopped bool

	settles     atomic.Int64 // settles finished
	read        atomic.Int64 // the ledger's records read from the index
	marked      atomic.Int64 // records marked deleted
	leftPresent atomic.Int64 // records read and left present (in the index, or written since the delete)
	capped      atomic.Int64 // settles that stopped at settleMaxRecords
	failures    atomic.Int64 // settles that failed, to be retried
}

// settleJob is the pending settle of one namespace: what the deletes it
// merges tell.
type settleJob struct {
	index, namespace, table string
	since                   time.Time // the latest delete's FilterDelete.Since
	answered                time.Time // the latest delete's answer
	lsn                     uint64    // the highest request LSN among them
	hasLSN                  bool      // every delete merged carried one
	notBefore               time.Time // a failed settle's retry time
}

// merge makes j the settle of both its deletes and o's: the latest
// Since and answer, the highest LSN, LSNs trusted only if both carried
// one. A record confirmed before the later Since and absent from reads
// indexed past the higher LSN is gone, whichever delete removed it.
func (j *settleJob) merge(o *settleJob) {
	if o.since.After(j.since) {
		j.since = o.since
	}
	if o.answered.After(j.answered) {
		j.answered = o.answered
	}
	j.lsn = max(j.lsn, o.lsn)
	j.hasLSN = j.hasLSN && o.hasLSN
}

// startSettler builds the settler of the wing's capture core when its
// ledger can settle (ledger.Settler), opening each index with namespace
// rules (the backstop's connections when it runs, for their pacer), and
// registers it with the capture adapter. An index that cannot be opened
// (no API key) is left out and logged: its deletes by filter leave the
// ledger's records present.
func (w *Wing) startSettler() {
	if w.hook == nil {
		return
	}
	settle, ok := w.core.Ledger().(ledger.Settler)
	if !ok {
		w.log.Warn("this ledger cannot settle deletes by filter: they leave the ledger's records present (forget treats them as candidates)")
		return
	}
	s := &settler{ledger: settle, indexes: map[string]*pcstore.Index{}, absentAfter: w.settings.VerifyDeadline.D(),
		retry: w.recoveryInterval, maxRecords: settleMaxRecords, log: w.log.With("settle", "pinecone"), queued: map[string]*settleJob{}, wake: make(chan struct{}, 1)}
	if s.retry <= 0 {
		s.retry = time.Minute
	}
	if w.backstop != nil {
		for _, ix := range w.backstop.indexes {
			s.indexes[ix.Name()] = ix
		}
	}
	for _, ic := range w.settings.Indexes {
		if len(ic.Namespaces) == 0 || s.indexes[ic.Name] != nil {
			continue
		}
		ix, err := w.openIndex(ic, newPacer(w.settings.ScanRate).wait)
		if err != nil {
			w.log.Warn("deletes by filter in this index leave the ledger's records present (forget treats them as candidates)", "index", ic.Name, "err", err)
			continue
		}
		s.indexes[ic.Name], s.owned = ix, append(s.owned, ix)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go s.run(ctx)
	w.settler = s
	w.hook.OnFilterDelete(s.enqueue)
}

// enqueue queues a settle of d's namespace, merged with the one pending;
// it never blocks (it runs on the request's goroutine).
func (s *settler) enqueue(fd pcapture.FilterDelete) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	d := &settleJob{index: fd.Index, namespace: fd.Namespace, table: fd.Table, since: fd.Since, answered: fd.Answered,
		lsn: fd.RequestLSN, hasLSN: fd.HasLSN}
	if j := s.queued[d.table]; j != nil {
		j.merge(d)
		j.notBefore = time.Time{} // a new delete retries at once
	} else {
		s.queued[d.table] = d
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run settles the queued namespaces one at a time until ctx ends.
func (s *settler) run(ctx context.Context) {
	defer close(s.done)
	for {
		j, wait := s.next()
		if j != nil {
			s.settle(ctx, j)
			continue
		}
		var (
			timer *time.Timer
			due   <-chan time.Time // nil, and never ready, with nothing queued
		)
		if wait > 0 {
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// next takes a job due now off the queue, or says how long until the
// first is due (0: none queued).
func (s *settler) next() (*settleJob, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var wait time.Duration
	for table, j := range s.queued {
		if until := j.notBefore.Sub(now); until > 0 {
			if wait == 0 || until < wait {
				wait = until
			}
			continue
		}
		delete(s.queued, table)
		return j, 0
	}
	return nil, wait
}

// settle runs one job; on failure it is queued again for s.retry later,
// merged with any delete that came meanwhile.
func (s *settler) settle(ctx context.Context, j *settleJob) {
	err := s.settleNamespace(ctx, j)
	if err == nil {
		s.settles.Add(1)
		return
	}
	if ctx.Err() != nil {
		return // stopping
	}
	// Counted once logged, so that a reader of the count finds the line.
	s.log.Warn("pinecone: settling the ledger after a delete by filter failed; its records stay present until it is retried",
		"index", j.index, "namespace", j.namespace, "retry_in", s.retry.String(), "err", err)
	s.failures.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if newer := s.queued[j.table]; newer != nil {
		newer.merge(j) // a delete came meanwhile: both run at once, as one
		return
	}
	j.notBefore = time.Now().Add(s.retry)
	s.queued[j.table] = j
}

// errNotIndexed fails a settle whose reads did not reach the delete's LSN.
var errNotIndexed = errors.New("the index's reads had not indexed the delete (x-pinecone-max-indexed-lsn below its x-pinecone-request-lsn) within pinecone.verify_deadline")

// settleNamespace reads the ledger's present records of j's namespace
// from the index, page by page, and marks deleted those gone.
func (s *settler) settleNamespace(ctx context.Context, j *settleJob) error {
	ix := s.indexes[j.index]
	if ix == nil {
		return fmt.Errorf("pinecone index %q has no connection to read it (see the start's log)", j.index)
	}
	if !j.hasLSN {
		if err := sleep(ctx, time.Until(j.answered.Add(s.absentAfter))); err != nil {
			return err
		}
	}
	began := time.Now()
	var read, marked int
	after := ""
	for read < s.maxRecords {
		ids, err := s.ledger.PresentRecords(ctx, ledger.StorePinecone, j.table, after, min(settlePage, s.maxRecords-read))
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		after = ids[len(ids)-1]
		found, err := s.readPage(ctx, ix, j, ids)
		if err != nil {
			return err
		}
		var gone []string
		for _, id := range ids {
			if !found[id] {
				gone = append(gone, id)
			}
		}
		n, err := s.ledger.MarkDeletedUnlessConfirmedSince(ctx, ledger.StorePinecone, j.table, gone, j.since)
		if err != nil {
			return err
		}
		read += len(ids)
		marked += n
		s.read.Add(int64(len(ids)))
		s.marked.Add(int64(n))
		s.leftPresent.Add(int64(len(ids) - n))
		if len(ids) < settlePage {
			break
		}
	}
	if read >= s.maxRecords {
		s.log.Warn("pinecone: a settle after a delete by filter stopped at its cap; the namespace's later records stay present until the next settle",
			"index", j.index, "namespace", j.namespace, "cap", s.maxRecords)
		s.capped.Add(1)
	}
	s.log.Info("pinecone: ledger settled after a delete by filter", "index", j.index, "namespace", j.namespace,
		"read", read, "marked_deleted", marked, "left_present", read-marked, "took", time.Since(began).Round(time.Millisecond).String())
	return nil
}

// readPage fetches ids and returns those present, once the reads may be
// trusted (see settler): with LSN headers, reads indexed past j's delete,
// read again with backoff until then or until pinecone.verify_deadline.
func (s *settler) readPage(ctx context.Context, ix *pcstore.Index, j *settleJob, ids []string) (map[string]bool, error) {
	deadline := time.Now().Add(s.absentAfter)
	wait := settleFirstBackoff
	for {
		p, err := ix.ReadPresence(ctx, j.namespace, ids)
		if err != nil {
			return nil, err
		}
		switch {
		case !j.hasLSN:
			return p.Found, nil // verify_deadline has passed since the delete's answer
		case !p.Stamped:
			// The index stopped sending the header: absence rests on time.
			if err := sleep(ctx, time.Until(j.answered.Add(s.absentAfter))); err != nil {
				return nil, err
			}
			j.hasLSN = false
			continue
		case p.IndexedLSN >= j.lsn:
			return p.Found, nil
		case time.Now().Add(wait).After(deadline):
			return nil, errNotIndexed
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, settleMaxBackoff)
	}
}

// halt stops the settle in progress and waits for it; queued settles are
// dropped (the ledger keeps their records present). It closes the index
// connections the settler opened. Later calls do nothing.
func (s *settler) halt() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.queued = map[string]*settleJob{}
	s.mu.Unlock()
	s.stop()
	<-s.done
	closeAll(s.owned)
}

// metrics adds the settler's counts to m.
func (s *settler) metrics(m map[string]float64) {
	m["lethe_pinecone_filter_delete_settles_total"] = float64(s.settles.Load())
	m["lethe_pinecone_filter_delete_records_read_total"] = float64(s.read.Load())
	m["lethe_pinecone_filter_delete_records_marked_deleted_total"] = float64(s.marked.Load())
	m["lethe_pinecone_filter_delete_records_left_present_total"] = float64(s.leftPresent.Load())
	m["lethe_pinecone_filter_delete_settles_capped_total"] = float64(s.capped.Load())
	m["lethe_pinecone_filter_delete_settle_failures_total"] = float64(s.failures.Load())
}

// sleep waits d, or returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
