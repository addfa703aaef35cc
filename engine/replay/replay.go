// Package replay re-applies completed forgets to the stores as they are
// now (lethe-proxy replay): after a backup is restored, the records a
// forget deleted may be back. The ledger lives outside the restored store,
// so it still holds every tombstone; the journal keeps a completed
// request's subject only as its HMAC, never as text. A replay therefore
// reads every record of every configured table and namespace (the
// reconcile scanners), hashes the subjects each record names, and where a
// hash is a completed forget's it has the subject's text again, from the
// restored record itself. With it, it deletes through the same layers as
// forget (connector.Layer: the subject predicate and the ledger's ids of
// that subject), verifies absence with the certificate's queries, runs the
// layer's cleanup and physical step, marks the ids deleted in the ledger,
// and signs and logs a report per request (forget.replayed, its run_id the
// forget's request id) with what came back and what went. A request whose
// records did not come back is logged too, with zero counts: the log then
// shows that it was checked after the restore.
//
// What a replay cannot do: records whose subject columns are empty now
// (metadata stripped after the backup) are found only through the ledger's
// ids, and only in a layer where another record of the subject gave its
// text back; a subject whose tombstone was lifted is not replayed (the
// person may have written since, lawfully).
package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// Ledger is what a replay needs of the ledger: the tombstones and the
// requests that set them, the subject's record ids, and where to mark the
// records it deleted.
type Ledger interface {
	Tombstones(ctx context.Context) ([]ledger.Tombstone, error)
	Forget(ctx context.Context, id string) (ledger.ForgetRequest, error)
	BySubject(ctx context.Context, subject ledger.SubjectHash) ([]ledger.Record, error)
	MarkDeleted(ctx context.Context, store ledger.Store, table string, recordIDs []string) error
}

// An open ledger, whichever its backend, is a Ledger.
var _ Ledger = (*ledger.Handle)(nil)

// Config is one replay.
type Config struct {
	Ledger   Ledger
	Hasher   *ledger.Hasher
	Scanners []connector.Scanner // every configured table and namespace, read whole
	Layers   []connector.Layer   // the same, as forget deletes from them
	// Certifier signs each request's report and appends its
	// forget.replayed event. Not used by a dry run.
	Certifier *engine.Certifier
	// DryRun finds and counts what came back, and deletes, marks and logs
	// nothing.
	DryRun bool
	Now    func() time.Time
	Logger *slog.Logger
}

// Result is a replay's outcome, one entry per completed forget whose
// subject is still tombstoned, in request id order.
type Result struct {
	At       time.Time `json:"at"`
	DryRun   bool      `json:"dry_run"`
	Requests []Request `json:"requests"`
	// Skipped are tombstones whose forget is not completed (still running,
	// or failed): the engine resumes the first, an operator looks at the
	// second; a replay leaves both alone.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Request is what a replay found and did for one completed forget.
type Request struct {
	RequestID string  `json:"request_id"`
	Layers    []Layer `json:"layers"`
	// Report is the signed report with the proof that the log holds its
	// forget.replayed event; nil for a dry run.
	Report []byte `json:"-"`
	// LogIndex is where the log holds the event (-1 for a dry run).
	LogIndex int64 `json:"log_index"`
}

// Layer is one layer of one request: records found naming the forgotten
// subject, records deleted, records still found by the forget's queries
// afterwards.
type Layer struct {
	Store    ledger.Store `json:"store"`
	Table    string       `json:"table"`
	Found    int64        `json:"found"`
	Deleted  int64        `json:"deleted"`
	Residual int64        `json:"residual"`
	Method   string       `json:"method"`
	// Physical is what the layer's page scan found after the delete (a
	// table with physical set); nil otherwise.
	Physical *connector.Physical `json:"physical,omitempty"`
}

// Skipped is a tombstone a replay did not replay, and why.
type Skipped struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
}

// Found is the records found over every layer.
func (r Request) Found() (n int64) {
	for _, l := range r.Layers {
		n += l.Found
	}
	return n
}

// Clean reports whether no layer of any request still holds records of a
// forgotten subject (a dry run is clean when it found none).
func (r Result) Clean() bool {
	for _, q := range r.Requests {
		for _, l := range q.Layers {
			if l.Residual > 0 || (r.DryRun && l.Found > 0) {
				return false
			}
		}
	}
	return true
}

// Run replays every completed forget whose subject is still tombstoned.
// Each request's report is signed and logged once its layers are done; a
// run that stops midway (a crash, a store that failed) is run again, and
// finds what is still there then.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Ledger == nil || cfg.Hasher == nil {
		return Result{}, errors.New("replay: Run needs a Ledger and a Hasher")
	}
	if !cfg.DryRun && cfg.Certifier == nil {
		return Result{}, errors.New("replay: a replay that deletes needs a certifier (forget.signing_key) to log its reports")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	res := Result{At: cfg.Now().UTC(), DryRun: cfg.DryRun}
	forgotten, skipped, err := completedForgets(ctx, cfg.Ledger)
	if err != nil {
		return res, err
	}
	res.Skipped = skipped
	found, err := findForgotten(ctx, cfg, forgotten)
	if err != nil {
		return res, err
	}
	ids := make([]string, 0, len(forgotten))
	byID := map[string]ledger.SubjectHash{}
	for h, id := range forgotten {
		ids = append(ids, id)
		byID[id] = h
	}
	sort.Strings(ids)
	for _, id := range ids {
		q, err := replayRequest(ctx, cfg, id, byID[id], found[byID[id]])
		res.Requests = append(res.Requests, q)
		if err != nil {
			return res, fmt.Errorf("replay of request %s: %w (run lethe-proxy replay again: it finds what is still there)", id, err)
		}
	}
	return res, nil
}

// completedForgets maps each tombstoned subject whose forget completed to
// that request, and lists the others.
func completedForgets(ctx context.Context, l Ledger) (map[ledger.SubjectHash]string, []Skipped, error) {
	tombs, err := l.Tombstones(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: reading the tombstones: %w", err)
	}
	out := map[ledger.SubjectHash]string{}
	var skipped []Skipped
	for _, t := range tombs {
		r, err := l.Forget(ctx, t.RequestID)
		if err != nil {
			return nil, nil, fmt.Errorf("replay: reading request %s: %w", t.RequestID, err)
		}
		switch r.Status {
		case ledger.ForgetCompleted:
			out[t.Subject] = t.RequestID
		case ledger.ForgetReceived:
			skipped = append(skipped, Skipped{t.RequestID, "still running: the engine resumes it and deletes what the restore brought back"})
		default:
			skipped = append(skipped, Skipped{t.RequestID, fmt.Sprintf("status %s: see lethe-proxy forget status %s", r.Status, t.RequestID)})
		}
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].RequestID < skipped[j].RequestID })
	return out, skipped, nil
}
