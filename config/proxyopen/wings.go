package proxyopen

import (
	"context"
	"log/slog"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcwing"
)

// Wings builds the wing of each store the config names, PostgreSQL
// first: forget's layers follow this order. Without a core (core nil) the
// wings only read their stores, for check, reconcile, sweep and replay.
func Wings(cfg *config.Config, core *coreopen.Core, log *slog.Logger) (connector.Wings, error) {
	var wings connector.Wings
	pg, err := pgwing.New(cfg, core.CaptureCore(), core.LedgerHandle(), log)
	if err != nil {
		return nil, err
	}
	if pg != nil {
		wings = append(wings, pg)
	}
	if pc := pcwing.New(cfg, core.CaptureCore(), log); pc != nil {
		wings = append(wings, pc)
	}
	return wings, nil
}

// Coverage builds the wing of each store the config names without a core
// and runs their coverage checks under the config's coverage policy
// (lethe-proxy check; connector.Wings.Coverage): the merged report, and
// an error per store that could not be checked. err is a wing that could
// not be built; nothing was checked then.
func Coverage(ctx context.Context, cfg *config.Config) (report coverage.Report, failed []error, err error) {
	wings, err := Wings(cfg, nil, nil)
	if err != nil {
		return coverage.Report{}, nil, err
	}
	defer wings.Close()
	report, failed = wings.Coverage(ctx, cfg.Compiled().Coverage)
	return report, failed, nil
}

// FromWings builds the wing of each store the config names without a
// core, and gathers what open returns of every wing (its scanners, its
// retainers or its forget layers); done closes what they opened and the
// wings. On an error what was opened is closed again.
func FromWings[T any](ctx context.Context, cfg *config.Config, log *slog.Logger, open func(connector.Wing, context.Context) ([]T, func(), error)) (_ []T, done func(), err error) {
	wings, err := Wings(cfg, nil, log)
	if err != nil {
		return nil, nil, err
	}
	var (
		all     []T
		closers = []func(){wings.Close}
	)
	done = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	for _, w := range wings {
		got, closeGot, err := open(w, ctx)
		if err != nil {
			done()
			return nil, nil, err
		}
		closers = append(closers, closeGot)
		all = append(all, got...)
	}
	return all, done, nil
}

// ForgetLayers is a wing's forget layers, for FromWings.
func ForgetLayers(w connector.Wing, ctx context.Context) ([]connector.Layer, func(), error) {
	side, err := w.Forget(ctx)
	if err != nil {
		return nil, nil, err
	}
	return side.Layers, side.Close, nil
}
