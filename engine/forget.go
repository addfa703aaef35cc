package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// Receipt is the answer to a forget: the request to follow and the secret
// with which the data subject recognises their certificate. The secret is
// returned once and never stored.
type Receipt struct {
	RequestID     string    `json:"request_id"`
	Deadline      time.Time `json:"deadline"`
	SubjectSecret string    `json:"subject_secret"`
}

// ErrInProgress is returned when the subject already has a forget running.
var ErrInProgress = errors.New("engine: a forget of this subject is already in progress")

// UsedTokenError is returned when a token was used before; RequestID is
// the request it opened, so a client that retried can follow it.
type UsedTokenError struct{ RequestID string }

func (e *UsedTokenError) Error() string {
	return ErrTokenUsed.Error() + ": request " + e.RequestID
}
func (e *UsedTokenError) Unwrap() error { return ErrTokenUsed }

// ForgetOptions change what Forget accepts.
type ForgetOptions struct {
	// NothingFound confirms a forget whose preview found no record of the
	// subject in any layer: its certificate then says that nothing was
	// found. Without it such a forget is refused (NothingFoundError), so
	// that a mistyped subject is not certified as erased; with it a
	// forget that finds records is refused (ErrRecordsFound).
	NothingFound bool
}

// Forget checks the confirm token against subject and the current counts,
// journals the request, tombstones the subject and starts the deletion.
// At most one ForgetOptions is used.
func (e *Engine) Forget(ctx context.Context, subject, confirmToken string, options ...ForgetOptions) (Receipt, error) {
	var opts ForgetOptions
	if len(options) > 0 {
		opts = options[0]
	}
	now := e.cfg.Now()
	tok, tokenHash, err := openToken(confirmToken, e.token, now)
	if err != nil {
		return Receipt{}, err
	}
	h := e.cfg.Hasher.Hash(subject)
	if tok.subject != h {
		return Receipt{}, ErrTokenSubject
	}
	if prior, err := e.cfg.Ledger.ForgetByToken(ctx, tokenHash); err == nil {
		return Receipt{}, &UsedTokenError{RequestID: prior.ID}
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return Receipt{}, err
	}
	layers, err := e.preview(ctx, subject, h)
	if err != nil {
		return Receipt{}, err
	}
	if countsDigest(layers) != tok.counts {
		return Receipt{}, ErrTokenStale
	}
	switch nothing := nothingFound(layers); {
	case nothing && !opts.NothingFound:
		near, err := e.nearMisses(ctx, subject, layers)
		if err != nil {
			return Receipt{}, err
		}
		return Receipt{}, &NothingFoundError{NearMisses: near}
	case !nothing && opts.NothingFound:
		return Receipt{}, ErrRecordsFound
	}

	id := randomHex(16)
	secret, commitment := newCommitment(subject)
	st := &journalState{Sealed: e.sealer.seal(id, subject), Commitment: commitment}
	for _, l := range layers {
		st.Layers = append(st.Layers, layerState{Store: string(l.Store), Table: l.Table})
	}
	req := ledger.ForgetRequest{
		ID: id, Subject: h, TokenHash: tokenHash,
		ReceivedAt: now, Deadline: now.Add(e.cfg.Deadline), State: st.marshal(),
	}
	switch err := e.cfg.Ledger.OpenForget(ctx, req); {
	case errors.Is(err, ledger.ErrTokenUsed):
		prior, _ := e.cfg.Ledger.ForgetByToken(ctx, tokenHash)
		return Receipt{}, &UsedTokenError{RequestID: prior.ID}
	case errors.Is(err, ledger.ErrForgetInProgress):
		return Receipt{}, ErrInProgress
	case err != nil:
		return Receipt{}, err
	}
	e.cfg.Tombstoned(h, true)
	if _, err := e.cfg.Certifier.appendEvent(ctx, certificate.EventRequested, id); err != nil {
		// The request is journaled and will complete; its certificate is
		// logged then. The requested event is best effort.
		e.log.Warn("forget: could not log the request event", "request", id, "err", err)
	}
	e.log.Info("forget: request received", "request", id, "deadline", req.Deadline)
	e.spawn(id)
	return Receipt{RequestID: id, Deadline: req.Deadline, SubjectSecret: hex.EncodeToString(secret[:])}, nil
}

// Status is a request as the API shows it (no subject data).
type Status struct {
	RequestID  string              `json:"request_id"`
	Status     ledger.ForgetStatus `json:"status"`
	ReceivedAt time.Time           `json:"received_at"`
	Deadline   time.Time           `json:"deadline"`
	UpdatedAt  time.Time           `json:"updated_at"`
	Overdue    bool                `json:"overdue"`
	Layers     []LayerStatus       `json:"layers"`
	Error      string              `json:"error,omitempty"`
	// LateWrites are records about the subject committed after the
	// forget, by any path, and deleted since (LateWrite).
	LateWrites []ledger.LateWrite `json:"late_writes,omitempty"`
	// OpenHorizons are the copies of a completed request's deleted
	// records still expected to exist now: the certificate's horizon
	// entries dated after now, conditional or unknown.
	OpenHorizons []HorizonStatus `json:"open_horizons,omitempty"`
	// PhysicalAddenda are the later looks at the pages of layers whose
	// certified scan found residue (physicalstatus.go).
	PhysicalAddenda []PhysicalAddendum `json:"physical_addenda,omitempty"`
}

// LayerStatus is one layer's progress.
type LayerStatus struct {
	Store    string `json:"store"`
	Table    string `json:"table"`
	Deleted  int    `json:"deleted"`
	Residual int64  `json:"residual"`
	Done     bool   `json:"done"`
	// Unverified: the last verification still found records (residual);
	// the request stays open and the layer is verified again later.
	Unverified bool `json:"unverified,omitempty"`
	// Physical is what the layer's page scan found after the delete (a
	// table with physical: report); absent otherwise.
	Physical *connector.Physical `json:"physical,omitempty"`
	// PhysicalLatest is the layer's latest look at its pages after the
	// certificate (a re-scan, or that re-scans ended), beside Physical,
	// the certified one; absent when none followed.
	PhysicalLatest *PhysicalAddendum `json:"physical_latest,omitempty"`
}

// Status returns the request's progress; ledger.ErrNotFound if none.
func (e *Engine) Status(ctx context.Context, id string) (Status, error) {
	r, err := e.cfg.Ledger.Forget(ctx, id)
	if err != nil {
		return Status{}, err
	}
	st, err := parseState(r.State)
	if err != nil {
		return Status{}, err
	}
	out := Status{
		RequestID: r.ID, Status: r.Status, ReceivedAt: r.ReceivedAt, Deadline: r.Deadline, UpdatedAt: r.UpdatedAt,
		Overdue: overdue(r.Status, r.Deadline, e.cfg.Now()), Error: st.Error,
	}
	for _, l := range st.Layers {
		out.Layers = append(out.Layers, LayerStatus{Store: l.Store, Table: l.Table, Deleted: len(l.gone()), Residual: l.Residual, Done: l.Done, Unverified: l.Unverified,
			Physical: l.Physical})
	}
	if out.LateWrites, err = e.cfg.Ledger.LateWrites(ctx, id); err != nil {
		return Status{}, err
	}
	if r.Status == ledger.ForgetCompleted {
		out.OpenHorizons = openHorizons(st.Horizon, e.cfg.Now())
	}
	if err := e.physicalAddenda(ctx, &out); err != nil {
		return Status{}, err
	}
	return out, nil
}

// ErrNotCompleted is returned for the certificate of a request still open
// or failed.
var ErrNotCompleted = errors.New("engine: the request has no certificate (not completed)")

// Certificate returns the certificate of a completed request.
func (e *Engine) Certificate(ctx context.Context, id string) ([]byte, error) {
	r, err := e.cfg.Ledger.Forget(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status != ledger.ForgetCompleted {
		return nil, fmt.Errorf("%w: status %s", ErrNotCompleted, r.Status)
	}
	return r.Certificate, nil
}

// Lift removes subject's tombstone, so that writes about it are accepted
// again, and logs that it was lifted. It reports whether there was one.
func (e *Engine) Lift(ctx context.Context, subject string) (bool, error) {
	h := e.cfg.Hasher.Hash(subject)
	ts, err := e.cfg.Ledger.Tombstones(ctx)
	if err != nil {
		return false, err
	}
	requestID := ""
	for _, t := range ts {
		if t.Subject == h {
			requestID = t.RequestID
		}
	}
	lifted, err := e.cfg.Ledger.LiftTombstone(ctx, h)
	if err != nil || !lifted {
		return lifted, err
	}
	e.cfg.Tombstoned(h, false)
	if _, err := e.cfg.Certifier.appendEvent(ctx, certificate.EventLifted, requestID); err != nil {
		return true, fmt.Errorf("engine: the tombstone was lifted but the event could not be logged: %w", err)
	}
	e.log.Info("forget: tombstone lifted", "request", requestID)
	return true, nil
}
