package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
)

// ErrWrongSubject is returned when a re-verification names a subject other
// than the one the request forgot.
var ErrWrongSubject = errors.New("engine: this subject is not the one the request forgot")

// Reverification is the answer to Reverify: what each layer holds of the
// subject now, and where the event is in the log.
type Reverification struct {
	RequestID string          `json:"request_id"`
	CheckedAt time.Time       `json:"checked_at"`
	Absent    bool            `json:"absent"` // every layer's residual is 0
	Layers    []LayerResidual `json:"layers"`
	LogIndex  int64           `json:"log_index"` // the forget.reverified event
}

// LayerResidual is one layer's count of the subject's records.
type LayerResidual struct {
	Store    ledger.Store `json:"store"`
	Table    string       `json:"table"`
	Residual int64        `json:"residual"`
}

// Reverify checks again, for a completed request, that every configured
// layer holds none of the subject's records (with the same queries as the
// certificate), and logs a forget.reverified event. The subject must be
// given again: the journal keeps only its HMAC. Rows found are reported,
// not deleted: a new preview and forget does that, under a new
// certificate.
func (e *Engine) Reverify(ctx context.Context, id, subject string) (Reverification, error) {
	r, err := e.cfg.Ledger.Forget(ctx, id)
	if err != nil {
		return Reverification{}, err
	}
	if r.Status != ledger.ForgetCompleted {
		return Reverification{}, fmt.Errorf("%w: status %s", ErrNotCompleted, r.Status)
	}
	if e.cfg.Hasher.Hash(subject) != r.Subject {
		return Reverification{}, ErrWrongSubject
	}
	tags, err := e.ledgerIDs(ctx, r.Subject)
	if err != nil {
		return Reverification{}, err
	}
	out := Reverification{RequestID: id, CheckedAt: e.cfg.Now().UTC(), Absent: true}
	for _, l := range e.cfg.Layers {
		a, err := l.Residual(ctx, subject, tags[layerKey{l.Store(), l.Name()}].ids)
		if err != nil {
			return Reverification{}, err
		}
		out.Layers = append(out.Layers, LayerResidual{Store: l.Store(), Table: l.Name(), Residual: a.Residual})
		out.Absent = out.Absent && a.Residual == 0
	}
	if out.LogIndex, err = e.cfg.Certifier.appendEvent(ctx, certificate.EventReverified, id); err != nil {
		return Reverification{}, err
	}
	e.log.Info("forget: re-verified", "request", id, "absent", out.Absent)
	return out, nil
}
