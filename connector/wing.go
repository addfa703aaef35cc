package connector

import (
	"context"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// Wing is one store's whole part in the proxy: its relay, its capture
// adapter, whatever follows its writes in the background, and its side of
// forget, reconcile, retention and coverage. Each wing is built by one
// constructor in its own folder (proxy/pgwire/pgwing, proxy/pinecone/pcwing)
// from the compiled config, the capture core and the ledger; the command
// starts and stops wings and knows no store.
//
// A start runs Listen on every wing, then Prepare on every wing, then
// Serve; Listen must make nothing in a store that a failed start would
// have to undo, so that Prepare comes last. Shutdown then Close stop it.
type Wing interface {
	// Name is the wing's name in logs and errors: "postgres", "pinecone".
	Name() string

	// Listen binds the wing's listeners and reads its files; nothing is
	// served yet. On an error nothing of it stays bound.
	Listen() error
	// Prepare makes what must exist in the store before the wing serves
	// (the WAL follower's slot and its initial read); ctx ending stops it.
	Prepare(ctx context.Context) error
	// Serve serves until Shutdown and returns a listener's failure (nil
	// after Shutdown). A wing without a listener returns at Shutdown.
	Serve() error
	// Shutdown stops accepting, answers what is in flight within ctx,
	// then cuts the rest, and stops the wing's background work.
	Shutdown(ctx context.Context) error
	// Close releases the wing's connections; it runs after Shutdown, or
	// instead of it for a start that stopped before Serve.
	Close()

	// Forget opens the wing's side of forget: its layers, and how forget
	// waits until the wing has recorded every write committed so far
	// (nil when nothing can lag).
	Forget(ctx context.Context) (ForgetSide, error)
	// Scanners are what reconcile reads of the wing's store; Retainers,
	// the rules with retain a sweep deletes from, each with its retain.
	// Their closer releases the connections they opened.
	Scanners(ctx context.Context) ([]Scanner, func(), error)
	Retainers(ctx context.Context) ([]Expiring, func(), error)
	// Coverage reads the store's tables or namespaces for lethe-proxy
	// check and the proxy's coverage monitor: the findings, and how many
	// tables or namespaces were looked at.
	Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error)

	// Ready reports whether the wing can serve now (its store answers).
	Ready(ctx context.Context) error
	// Metrics adds the wing's series to m.
	Metrics(m map[string]float64)
}

// ForgetSide is a wing's part in forget.
type ForgetSide struct {
	Layers []Layer
	// Settle waits until the wing has recorded every write its store
	// committed before the call; nil when the wing records as it relays.
	Settle func(ctx context.Context) error
	// Horizon states when the copies of the store's data that a delete
	// does not reach are expected to be gone (nil: the wing states none).
	Horizon HorizonFunc
	// Close releases forget's connections to the store.
	Close func()
}
