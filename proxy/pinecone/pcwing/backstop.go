package pcwing

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// backstop is the wing's answer to writes that never passed the relay (a
// batch job given the real index host, a second service): every
// pinecone.scan_interval it reads every record of each namespace rule
// page by page (list, then fetch, as reconcile reads them, paced by
// pinecone.scan_rate), records through the capture core the (record,
// subject) pairs the ledger lacks, as the WAL follower records rows
// written around the PostgreSQL relay, and hands each subject a forget
// tombstoned to the core's late-write path, which logs it and, with
// forget.late_writes: delete, has forget's engine delete and verify the
// subject's records in that layer, logged as a late write of the request
// that forgot the subject (forget status shows it).
//
// A record the scan hands over is marked deleted in the ledger once the
// engine has taken it, since no relay sees the engine's own deletes.
// Subjects are held in memory for one page only, never logged.
type backstop struct {
	core     *capture.Capture
	scanners []connector.Scanner
	indexes  []*pcstore.Index // the scanners' connections, closed by close
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex         // guards stop, done and halted: Serve and Shutdown run apart
	stop   context.CancelFunc // set by start
	done   chan struct{}      // closed when run returns
	halted bool               // a start after halt does nothing

	scans      atomic.Int64 // scans finished, with or without errors
	scanned    atomic.Int64 // records read
	recorded   atomic.Int64 // records whose missing subjects were recorded
	lateWrites atomic.Int64 // (layer, forgotten subject) pairs handed to the core
	failures   atomic.Int64 // layers whose scan ended in an error
}

// start runs the scans in the background until stop; the first runs one
// interval after start, so that a proxy's start spends no read units.
func (b *backstop) start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.halted || b.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop, b.done = cancel, make(chan struct{})
	go b.run(ctx)
}

func (b *backstop) run(ctx context.Context) {
	defer close(b.done)
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	b.log.Info("pinecone backstop scan scheduled", "interval", b.interval.String(), "layers", len(b.scanners))
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			b.scan(ctx)
		}
	}
}

// halt stops the scan in progress (its context is cancelled) and waits
// for it; a backstop never started, or halted already, returns at once.
func (b *backstop) halt() {
	b.mu.Lock()
	b.halted = true
	stop, done := b.stop, b.done
	b.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// close closes the scanners' index connections.
func (b *backstop) close() { closeAll(b.indexes) }

// scan reads every layer once. A layer whose scan fails is logged and
// counted, and the others are scanned all the same: the next scan reads
// it again.
func (b *backstop) scan(ctx context.Context) {
	began := time.Now()
	before := [3]int64{b.scanned.Load(), b.recorded.Load(), b.lateWrites.Load()}
	for _, s := range b.scanners {
		err := s.Scan(ctx, func(page []connector.Record) error { return b.page(ctx, s, page) })
		switch {
		case err == nil, errors.Is(err, connector.ErrAbsent):
		case ctx.Err() != nil:
			return // stopping
		default:
			b.failures.Add(1)
			b.log.Warn("pinecone backstop: a layer's scan failed; it is scanned again at the next interval", "layer", s.Name(), "err", err)
		}
	}
	b.scans.Add(1)
	b.log.Info("pinecone backstop scan done", "records", b.scanned.Load()-before[0], "recorded", b.recorded.Load()-before[1],
		"late_writes", b.lateWrites.Load()-before[2], "took", time.Since(began).Round(time.Millisecond).String())
}

// page records one page of s's records that the ledger lacks, then hands
// each forgotten subject the page names to the late-write path.
func (b *backstop) page(ctx context.Context, s connector.Scanner, page []connector.Record) error {
	type forgotten struct {
		subject string
		hash    ledger.SubjectHash
		records []connector.Record
	}
	var (
		entries []ledger.Entry
		owners  []int // owners[i]: the record of entries[i], in page
		late    []*forgotten
	)
	b.scanned.Add(int64(len(page)))
	for i, rec := range page {
		if rec.Unreadable || rec.ID == "" || !utf8.ValidString(rec.ID) {
			continue // nothing a ledger could hold, or forget find (reconcile counts them)
		}
		for _, subject := range rec.Subjects {
			h := b.core.HashSubject(subject)
			entries = append(entries, ledger.Entry{Store: s.Store(), Table: rec.Table, RecordID: rec.ID, Subject: h})
			owners = append(owners, i)
			if !b.core.Forgotten(h) {
				continue
			}
			var f *forgotten
			for _, l := range late {
				if l.hash == h {
					f = l
				}
			}
			if f == nil {
				f = &forgotten{subject: subject, hash: h}
				late = append(late, f)
			}
			f.records = append(f.records, rec)
		}
	}
	if len(entries) == 0 {
		return nil
	}
	held, err := b.core.Holds(ctx, entries)
	if err != nil {
		return err
	}
	var changes []ledger.Change // one per record with a subject the ledger lacks
	last := -1                  // the record of changes' last change
	for i, e := range entries {
		if held[i] {
			continue
		}
		if owners[i] == last {
			changes[len(changes)-1].Subjects = append(changes[len(changes)-1].Subjects, e.Subject)
			continue
		}
		last = owners[i]
		changes = append(changes, ledger.Change{Kind: ledger.ChangeWrite, Store: e.Store, Table: e.Table, RecordID: e.RecordID, Subjects: []ledger.SubjectHash{e.Subject}})
	}
	if err := b.core.Observe(ctx, changes, true); err != nil {
		return err
	}
	b.recorded.Add(int64(len(changes)))
	for _, f := range late {
		b.lateWrite(ctx, s, f.subject, f.hash, f.records)
	}
	return nil
}

// lateWrite hands one forgotten subject of s's records to the core. The
// engine looks for the subject's records in the layer (s.Name(): a "*"
// rule's layer holds every namespace without a rule of its own) by the
// ledger's ids, which now include records, and deletes them; they are then
// marked deleted in the ledger. An error is logged: the records are still
// in the index, and the next scan hands them over again.
func (b *backstop) lateWrite(ctx context.Context, s connector.Scanner, subject string, h ledger.SubjectHash, records []connector.Record) {
	b.lateWrites.Add(1)
	if err := b.core.LateWrite(ctx, s.Store(), s.Name(), subject); err != nil {
		b.log.Warn("pinecone backstop: a late write was not deleted; the next scan hands it over again", "layer", s.Name(),
			"subject_hmac", h.String(), "err", err)
		return
	}
	if !b.core.DeletesLateWrites() || !b.core.Forgotten(h) {
		return // logged only, or the tombstone was lifted: the records stay
	}
	gone := make([]ledger.Change, 0, len(records))
	for _, rec := range records {
		gone = append(gone, ledger.Change{Kind: ledger.ChangeDelete, Store: s.Store(), Table: rec.Table, RecordID: rec.ID})
	}
	if err := b.core.Observe(ctx, gone, true); err != nil {
		b.log.Warn("pinecone backstop: a deleted late write is still present in the ledger", "layer", s.Name(), "err", err)
	}
}

// pacer spaces requests evenly at a rate per second; it is safe for
// concurrent use.
type pacer struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time // when the next request may go
}

func newPacer(perSecond float64) *pacer {
	return &pacer{every: time.Duration(float64(time.Second) / perSecond)}
}

// wait returns once the caller's request may go, or ctx's error.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	delay := time.Until(at)
	if delay <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
