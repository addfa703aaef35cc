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
func newWings(cfg *config.Config, c *coreopen.Core, log *slog.Logger) ([]connector.Wing, error) {
	var wings []connector.Wing
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

// fromWings gathers what open returns of every wing (its scanners or its
// retainers) and one function that closes what they opened; on an error
// what was opened is closed again.
func fromWings[T any](ctx context.Context, wings []connector.Wing, open func(connector.Wing, context.Context) ([]T, func(), error)) ([]T, func(), error) {
	var (
		all     []T
		closers []func()
	)
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	for _, w := range wings {
		got, closeGot, err := open(w, ctx)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, closeGot)
		all = append(all, got...)
	}
	return all, closeAll, nil
}

// closeWings closes every wing.
func closeWings(wings []connector.Wing) {
	for _, w := range wings {
		w.Close()
	}
}
