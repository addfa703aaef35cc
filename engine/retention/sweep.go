// Package retention runs retention sweeps (lethe-proxy sweep): in every
// table and namespace whose rule has retain, it deletes the records whose
// retain_by is older than the retention, marks them deleted in the ledger,
// verifies that none expired is left, and has the forget engine's
// certifier sign and log a report of what it did (retention.swept).
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// Expiring is a table or namespace rule with retain: where its records
// are, how long they are kept and what their age is counted from. Each
// wing's Retainers returns them.
type Expiring = connector.Expiring

// Config wires one retention sweep (lethe-proxy sweep).
type Config struct {
	Layers []Expiring
	// Ledger marks the records a sweep deletes as deleted, as the WAL
	// follower marks rows it sees deleted, so that preview and forget no
	// longer count them. Not used by a dry run.
	Ledger Ledger
	// Certifier signs the sweep's report and appends its event
	// (retention.swept) to the transparency log. Not used by a dry run.
	Certifier *engine.Certifier
	// Batch is how many records one statement or delete request removes
	// (default DefaultBatch), so that locks stay short.
	Batch int
	// DryRun counts the expired records and deletes, marks and logs
	// nothing.
	DryRun bool
	// PendingWait bounds the wait, at the end of the sweep, for proxies to
	// confirm writes of records it deleted, which it then marks deleted
	// again (see heldWrites; default DefaultPendingWait).
	PendingWait time.Duration
	RunID       string // default "sweep-" and the time and a random suffix
	Now         func() time.Time
	Logger      *slog.Logger
}

// DefaultBatch is the records per statement or request by default.
const DefaultBatch = 1000

// Layer is what a sweep found and did in one table or namespace.
type Layer struct {
	Store  ledger.Store
	Table  string
	Cutoff time.Time // records whose retain_by is before it are expired
	// Expired were found past retention, Deleted went, Residual expired
	// records were still found afterwards; Unreadable have no readable
	// retain_by and are kept.
	Expired, Deleted, Residual, Unreadable int64
	Method                                 string // as the report states it
	// Err is why the layer's sweep stopped; what it did until then is
	// counted. Running the sweep again finishes it.
	Err error
}

// Result is a sweep's outcome.
type Result struct {
	RunID  string
	At     time.Time
	Layers []Layer
	// Report is the signed report with the proof that the log holds its
	// event (certificate.VerifyReport checks it); nil for a dry run.
	Report []byte
}

// Clean reports whether every layer was swept and no expired record was
// found afterwards.
func (r Result) Clean() bool {
	for _, l := range r.Layers {
		if l.Err != nil || l.Residual > 0 {
			return false
		}
	}
	return true
}

// Sweep deletes, in every layer, the records older than the layer's
// retention (by retain_by), marks them deleted in the ledger, verifies that
// no expired record is left, and signs and logs a report of what it did. A
// layer that fails does not stop the others; it is counted in the report
// as far as it went. A sweep is idempotent: one that stops midway (a crash,
// a failed layer) is run again, and deletes what is expired then.
//
// The error is about the sweep as a whole (the report could not be signed
// or logged); a layer's failure is in its Layer.
func Sweep(ctx context.Context, cfg Config) (Result, error) {
	if !cfg.DryRun && (cfg.Ledger == nil || cfg.Certifier == nil) {
		return Result{}, errors.New("engine: a sweep that deletes needs the ledger and a certifier (forget.signing_key)")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PendingWait <= 0 {
		cfg.PendingWait = DefaultPendingWait
	}
	now := cfg.Now().UTC()
	if cfg.RunID == "" {
		cfg.RunID = engine.NewRunID("sweep", now)
	}
	res := Result{RunID: cfg.RunID, At: now}
	held := make([]*heldWrites, len(cfg.Layers))
	for i, l := range cfg.Layers {
		if !cfg.DryRun {
			held[i] = newHeldWrites(cfg.Ledger)
		}
		res.Layers = append(res.Layers, sweepLayer(ctx, cfg, l, now.Add(-l.Retain), held[i]))
	}
	if cfg.DryRun {
		return res, nil
	}
	for i, h := range held {
		settleHeld(ctx, cfg, &res.Layers[i], h)
	}
	report := certificate.Report{Kind: certificate.EventRetentionSwept, RunID: res.RunID, At: now}
	for _, l := range res.Layers {
		cutoff := l.Cutoff
		report.Layers = append(report.Layers, certificate.ReportLayer{
			// Records deleted were selected by the same predicate, even those
			// that expired or arrived after the count: found counts them too,
			// so that done never exceeds it (docs/certificate.md, Reports).
			Store: string(l.Store), Table: l.Table, Found: max(l.Expired, l.Deleted), Done: l.Deleted, Residual: l.Residual,
			Method: l.Method, Cutoff: &cutoff,
		})
	}
	signed, err := cfg.Certifier.LogReport(ctx, report)
	if err != nil {
		return res, fmt.Errorf("engine: the sweep's report could not be signed and logged (the deletes stand; run the sweep again to log one): %w", err)
	}
	res.Report = signed
	return res, nil
}

// sweepLayer counts, deletes and verifies one layer.
func sweepLayer(ctx context.Context, cfg Config, l Expiring, cutoff time.Time, held *heldWrites) Layer {
	out := Layer{Store: l.Store(), Table: l.Name(), Cutoff: cutoff}
	log := cfg.Logger.With("store", out.Store, "table", out.Table, "run", cfg.RunID)
	e, err := l.Expired(ctx, cutoff)
	if err != nil {
		out.Err = err
		out.Method = sweepMethod(l, cfg.Batch, connector.Absence{}, e, err)
		log.Warn("sweep: cannot count the expired records; the layer is skipped", "err", err)
		return out
	}
	out.Expired, out.Unreadable = e.Expired, e.Unreadable
	if cfg.DryRun {
		return out
	}
	out.Deleted, err = l.DeleteExpired(ctx, cutoff, cfg.Batch, func(table string, ids []string) error {
		changes := make([]ledger.Change, len(ids))
		for i, id := range ids {
			changes[i] = ledger.Change{Kind: ledger.ChangeDelete, Store: out.Store, Table: table, RecordID: id}
		}
		if err := cfg.Ledger.Observe(ctx, changes); err != nil {
			return err
		}
		return held.note(ctx, out.Store, table, ids)
	})
	if err != nil {
		out.Err = err
		log.Warn("sweep: deleting expired records failed; run the sweep again", "deleted", out.Deleted, "err", err)
	}
	abs, verr := l.ResidualExpired(ctx, cutoff)
	if verr != nil {
		// Not verified: what was found and not deleted is taken as left.
		out.Residual = max(out.Expired-out.Deleted, 0)
		out.Err = errors.Join(out.Err, verr)
		log.Warn("sweep: verifying the layer failed; run the sweep again", "err", verr)
	} else {
		out.Residual = abs.Residual
	}
	out.Method = sweepMethod(l, cfg.Batch, abs, e, out.Err)
	log.Info("sweep: layer swept", "cutoff", cutoff, "retain_by", l.RetainBy, "expired", out.Expired, "deleted", out.Deleted,
		"residual", out.Residual, "unreadable", out.Unreadable)
	return out
}

// settleHeld waits for the writes of l's deleted records that proxies
// had yet to confirm, and marks those records deleted again (heldWrites).
func settleHeld(ctx context.Context, cfg Config, l *Layer, h *heldWrites) {
	log := cfg.Logger.With("store", l.Store, "table", l.Table, "run", cfg.RunID)
	left, err := h.settle(ctx, cfg.PendingWait)
	if err != nil {
		l.Err = errors.Join(l.Err, fmt.Errorf("marking deleted the records a proxy wrote just before the sweep: %w", err))
		log.Warn("sweep: cannot mark deleted the records a proxy wrote just before the sweep; the ledger may list them until forget or reconcile checks the store", "records", len(h.changes), "err", err)
		return
	}
	if left > 0 {
		log.Warn("sweep: writes of swept records are still unconfirmed; if a proxy confirms them later the ledger lists those records again until forget checks the store",
			"intents", left, "waited", cfg.PendingWait)
	} else if len(h.changes) > 0 {
		log.Info("sweep: marked deleted again the records proxies wrote just before the sweep deleted them, now that their writes are resolved", "records", len(h.changes))
	}
}

// sweepMethod states for the report how records were selected, deleted
// and verified (queries with placeholders), what was kept, and why the
// layer stopped if it did.
func sweepMethod(l Expiring, batch int, abs connector.Absence, e connector.Expiry, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "records whose retain_by (%s) is before the cutoff (now minus %s) were deleted, at most %d per statement or request",
		l.RetainBy, days(l.Retain), batch)
	if abs.Method != "" {
		b.WriteString("; verified by " + abs.Method)
	}
	if len(abs.Queries) > 0 {
		b.WriteString("; queries:")
		for i, q := range abs.Queries {
			fmt.Fprintf(&b, " [%d] %s", i+1, q)
		}
	}
	if e.Unreadable > 0 {
		fmt.Fprintf(&b, "; %d records whose %s is missing or not a time were kept", e.Unreadable, l.RetainBy)
	}
	if err != nil {
		fmt.Fprintf(&b, "; the sweep of this layer failed (%v): run it again", err)
	}
	return b.String()
}

// days writes d in whole days when it is some, as the config does (90d).
func days(d time.Duration) string {
	const day = 24 * time.Hour
	if d > 0 && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}
