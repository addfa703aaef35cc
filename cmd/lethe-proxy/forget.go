package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// forgetting is the forget side of a running proxy: the engine, over the
// layers of every wing.
type forgetting struct {
	engine *engine.Engine
	sides  []connector.ForgetSide
	stop   context.CancelFunc // ends the tombstones' watch
}

// close stops the engine and closes the wings' forget connections.
func (f *forgetting) close() {
	f.stop()
	if f.engine != nil {
		f.engine.Close()
	}
	for _, s := range f.sides {
		if s.Close != nil {
			s.Close()
		}
	}
}

// newForget builds the engine when forget.signing_key is set (nil when
// not) from the wings' forget sides: their layers in wing order, and a
// settle that waits for every wing that can lag. The engine registers
// with the capture core as the sink of the WAL follower's late writes.
func newForget(cfg *config.Config, c *core, wings []connector.Wing, log *slog.Logger) (*forgetting, error) {
	fc := cfg.Forget
	if fc.SigningKey == "" {
		return nil, nil
	}
	if c == nil {
		return nil, errors.New("forget needs capture.tables or pinecone.indexes[].namespaces")
	}
	ctx, stop := context.WithCancel(context.Background())
	f := &forgetting{stop: stop}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	certifier, signer, err := announcedCertifier(octx, cfg, c.ledger, log)
	if err != nil {
		f.close()
		return nil, err
	}
	var (
		layers  []connector.Layer
		settles []func(context.Context) error
	)
	for _, w := range wings {
		side, err := w.Forget(octx)
		if err != nil {
			f.close()
			return nil, err
		}
		f.sides = append(f.sides, side)
		layers = append(layers, side.Layers...)
		if side.Settle != nil {
			settles = append(settles, side.Settle)
		}
	}
	e, err := engine.New(engine.Config{
		Ledger: c.ledger, Hasher: c.hasher, Layers: layers,
		Certifier: certifier,
		Deadline:  fc.Deadline.D(), TokenTTL: fc.TokenTTL.D(),
		Tombstoned: c.tombstones.Set, Logger: log, Owner: engineOwner(fc.Admin.Listen),
		Settle: settleAll(settles),
	})
	if err != nil {
		f.close()
		return nil, err
	}
	f.engine = e
	c.capture.OnLateWrite(e) // the WAL follower's late writes are deleted through it
	e.Start(time.Minute)
	go c.tombstones.Watch(ctx, c.ledger, cfg.Forget.TombstoneRefresh.D(), log)
	log.Info("forget enabled", "key_id", signer.KeyID(), "log_origin", fc.LogOrigin, "layers", len(layers))
	return f, nil
}

// settleAll is forget's wait for every wing that can lag (nil when none
// can): each in turn, the first error ending it.
func settleAll(settles []func(context.Context) error) func(context.Context) error {
	if len(settles) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, settle := range settles {
			if err := settle(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// announcedCertifier is newCertifier once the transparency log has
// recorded its signing key (a key.rotated event, appended only when the
// key is not the one that signed the log's latest checkpoint). Everything
// that signs and logs (forget in the proxy, sweep, reconcile --adopt)
// gets its certifier here, so that no certificate or report in the log is
// signed by a key the log never announced.
func announcedCertifier(ctx context.Context, cfg *config.Config, l *ledger.Handle, log *slog.Logger) (*engine.Certifier, *certificate.Signer, error) {
	certifier, signer, err := newCertifier(cfg, l)
	if err != nil {
		return nil, nil, err
	}
	if logged, err := certifier.AnnounceKey(ctx); err != nil {
		return nil, nil, fmt.Errorf("transparency log: recording the signing key %s: %w", signer.KeyID(), err)
	} else if logged {
		log.Info("signing key recorded in the transparency log (key.rotated)", "key_id", signer.KeyID())
	}
	return certifier, signer, nil
}

// newCertifier is the signing key, the trusted keys and the transparency
// log kept in l; use announcedCertifier, which records the key in the log
// first.
func newCertifier(cfg *config.Config, l *ledger.Handle) (*engine.Certifier, *certificate.Signer, error) {
	fc := cfg.Forget
	pem, err := os.ReadFile(fc.SigningKey)
	if err != nil {
		return nil, nil, fmt.Errorf("forget.signing_key: %w", err)
	}
	signer, err := certificate.LoadPrivateKey(pem)
	if err != nil {
		return nil, nil, fmt.Errorf("forget.signing_key %s: %w", fc.SigningKey, err)
	}
	keys, err := trustedKeys(fc.TrustedKeys, fc.LogOrigin, signer)
	if err != nil {
		return nil, nil, err
	}
	tl, err := translog.New(l.TransparencyLog(), signer.NoteSigner(fc.LogOrigin), fc.LogOrigin)
	if err != nil {
		return nil, nil, err
	}
	return engine.NewCertifier(engine.CertifierConfig{
		Signer: signer, Keys: keys, Log: tl, ValidFor: fc.CertificateValidity.D(),
		RulesSHA256: cfg.RulesDigest(), Tool: "lethe-proxy " + version,
	}), signer, nil
}

// engineOwner names this instance in forget leases: the same host and
// admin address after a restart (so a crashed instance resumes its own
// requests at once), different for each instance sharing a ledger.
func engineOwner(adminListen string) string {
	host, _ := os.Hostname()
	return host + "/" + adminListen
}

// trustedKeys reads the published key set, or trusts the signing key
// alone for the log origin when none is configured.
func trustedKeys(file, logOrigin string, signer *certificate.Signer) (certificate.KeySet, error) {
	if file == "" {
		return certificate.NewKeySet(logOrigin, signer.TrustedKey(time.Unix(0, 0).UTC()))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys: %w", err)
	}
	keys, err := certificate.ParseKeySet(data)
	if err != nil {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys %s: %w", file, err)
	}
	if keys.LogOrigin() != logOrigin {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys %s is for log %q, but forget.log_origin is %q: certificates would not verify against it; make them the same", file, keys.LogOrigin(), logOrigin)
	}
	if _, ok := keys.Lookup(signer.KeyID()); !ok {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys %s does not list the signing key %s: add the entry lethe-proxy keygen printed", file, signer.KeyID())
	}
	return keys, nil
}

// adminConfig is the admin API of this proxy: the engine, the tokens, a
// readiness check of the ledger and of every wing's store, and the
// counters of the core and of every wing.
func (f *forgetting) adminConfig(cfg *config.Config, c *core, wings []connector.Wing, log *slog.Logger) (admin.Config, error) {
	tokens, err := admin.LoadTokens(cfg.Forget.Admin.TokensFile)
	if err != nil {
		return admin.Config{}, fmt.Errorf("forget.admin.tokens_file: %w", err)
	}
	return admin.Config{
		Engine: f.engine, Tokens: tokens, Logger: log,
		Ready: func(ctx context.Context) error {
			if _, err := c.ledger.Tombstones(ctx); err != nil { // small, unlike the tags
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
			m := map[string]float64{"lethe_tombstones": float64(c.tombstones.Len())}
			c.capture.Stats.Metrics(m)
			for _, w := range wings {
				w.Metrics(m)
			}
			return m
		},
	}, nil
}
