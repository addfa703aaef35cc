package admin

import (
	"context"

	"github.com/lethe-privacy/lethe/engine"
)

// Engine is what the API asks of the forget engine; *engine.Engine is the
// real one, and tests plug in fakes.
type Engine interface {
	Preview(ctx context.Context, subject string) (engine.Preview, error)
	Forget(ctx context.Context, subject, confirmToken string, options ...engine.ForgetOptions) (engine.Receipt, error)
	Status(ctx context.Context, id string) (engine.Status, error)
	List(ctx context.Context, f engine.ListFilter) (engine.RequestList, error)
	Certificate(ctx context.Context, id string) ([]byte, error)
	Lift(ctx context.Context, subject string) (bool, error)
	Reverify(ctx context.Context, id, subject string) (engine.Reverification, error)
	Checkpoint(ctx context.Context) ([]byte, error)
	Inclusion(ctx context.Context, index, size int64) (engine.InclusionProof, error)
	Consistency(ctx context.Context, oldSize, newSize int64) (engine.ConsistencyProof, error)
	Verify(cert []byte) engine.VerifyResult
}

var _ Engine = (*engine.Engine)(nil)
