package main

import (
	"context"
	"log/slog"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcwing"
)

// newWings builds the wing of each store the config names, PostgreSQL
// first: forget's layers follow this order. Without a core (c nil) the
// wings only read their stores, for check, reconcile and sweep.
func newWings(cfg *config.Config, c *coreopen.Core, log *slog.Logger) (connector.Wings, error) {
	var wings connector.Wings
	pg, err := pgwing.New(cfg, c.CaptureCore(), c.LedgerHandle(), log)
	if err != nil {
		return nil, err
	}
	if pg != nil {
		wings = append(wings, pg)
	}
	if pc := pcwing.New(cfg, c.CaptureCore(), log); pc != nil {
		wings = append(wings, pc)
	}
	return wings, nil
}

// fromWings builds the wing of each store the config names without a
// core, and gathers what open returns of every wing (its scanners or its
// retainers); done closes what they opened and the wings. On an error
// what was opened is closed again.
func fromWings[T any](ctx context.Context, cfg *config.Config, log *slog.Logger, open func(connector.Wing, context.Context) ([]T, func(), error)) (_ []T, done func(), err error) {
	wings, err := newWings(cfg, nil, log)
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
