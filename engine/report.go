package engine

import (
	"context"

	"github.com/lethe-privacy/lethe/certificate"
)

// LogReport signs the report of an operation that is not a forget (a
// reconcile's adoption, a retention sweep), appends its event to the
// transparency log and returns the signed report with the proof that the
// log holds it, as JSON for the operator to keep or hand out. It needs the
// signer and the log, not a forget engine.
func (c *Certifier) LogReport(ctx context.Context, r certificate.Report) ([]byte, error) {
	if r.At.IsZero() {
		r.At = c.now()
	}
	sr, err := certificate.SignReport(c.signer, r)
	if err != nil {
		return nil, err
	}
	leaf, err := sr.Leaf()
	if err != nil {
		return nil, err
	}
	index, err := c.log.Append(ctx, leaf)
	if err != nil {
		return nil, err
	}
	if err := c.attachProof(ctx, leaf, index, sr.AttachLog); err != nil {
		return nil, err
	}
	return sr.Marshal()
}
