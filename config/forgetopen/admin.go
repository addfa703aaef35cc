package forgetopen

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/connector"
)

// ListenAdmin binds the admin API of forget.admin (listen address, TLS
// files, tokens file, read again when it changes) over f's engine, with a readiness check of the
// ledger and of every wing's store, the counters of the core and of
// every wing, and every wing's coverage check (GET /v1/coverage); nothing
// is served until the listener's Serve.
func (f *Forget) ListenAdmin(cfg *config.Config, core *coreopen.Core, wings []connector.Wing, log *slog.Logger) (*admin.Listener, error) {
	tokens, err := admin.LoadTokens(cfg.Forget.Admin.TokensFile)
	if err != nil {
		return nil, fmt.Errorf("forget.admin.tokens_file: %w", err)
	}
	acfg := admin.Config{
		Engine: f.Engine, Tokens: tokens, TokensFile: cfg.Forget.Admin.TokensFile, Logger: log,
		Ready: func(ctx context.Context) error {
			if _, err := core.Ledger.Tombstones(ctx); err != nil { // small, unlike the tags
				return fmt.Errorf("ledger: %w", err)
			}
			for _, w := range wings {
				if err := w.Ready(ctx); err != nil {
					return err
				}
			}
			return nil
		},
		Metrics: func() map[string]float64 {
			m := map[string]float64{"lethe_tombstones": float64(core.Tombstones.Len())}
			core.Capture.Stats.Metrics(m)
			for _, w := range wings {
				w.Metrics(m)
			}
			return m
		},
	}
	acfg.Coverage = coverageOf(cfg, core, wings)
	a := cfg.Forget.Admin
	l, err := admin.Listen(acfg, a.Listen, a.TLS.CertFile, a.TLS.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("forget.admin: %w", err)
	}
	return l, nil
}

// coverageOf is what GET /v1/coverage reads: every wing's coverage check
// judged by the configuration's coverage policy, as lethe-proxy check
// judges it, and the ledger's transparency log for the latest runs.
func coverageOf(cfg *config.Config, core *coreopen.Core, wings []connector.Wing) admin.CoverageConfig {
	var out admin.CoverageConfig
	for _, w := range wings {
		out.Checkers = append(out.Checkers, w)
	}
	if compiled := cfg.Compiled(); compiled != nil {
		out.Policy = compiled.Coverage
	}
	if core != nil && core.Ledger != nil {
		out.Log = core.Ledger.TransparencyLog()
	}
	return out
}
