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
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// forgetting is the forget side of a running proxy.
type forgetting struct {
	engine   *engine.Engine
	store    *pgstore.Store
	pinecone []*pcstore.Index
	ctx      context.Context
	stop     context.CancelFunc
}

// Close stops the engine (when built) and closes the stores.
func (f *forgetting) Close() {
	f.stop()
	if f.engine != nil {
		f.engine.Close()
	}
	if f.store != nil {
		f.store.Close()
	}
	for _, ix := range f.pinecone {
		ix.Close()
	}
}

// newForget builds the engine when forget.signing_key is set; nil when not.
func newForget(cfg *config.Config, c *captured, log *slog.Logger) (*forgetting, error) {
	fc := cfg.Forget
	if fc.SigningKey == "" {
		return nil, nil
	}
	if c == nil {
		return nil, errors.New("forget needs capture.tables or pinecone.indexes[].namespaces")
	}
	ctx, stop := context.WithCancel(context.Background())
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	certifier, signer, err := announcedCertifier(octx, cfg, c.ledger, log)
	if err != nil {
		stop()
		return nil, err
	}
	var store *pgstore.Store // nil for a proxy for Pinecone alone
	var layers []connector.Layer
	if len(cfg.Capture.Tables) > 0 {
		if store, err = openStore(octx, cfg.Capture, "forget deletes and verifies"); err != nil {
			stop()
			return nil, err
		}
		if layers, err = pgLayers(octx, store, cfg.Capture.Tables, log); err != nil {
			store.Close()
			stop()
			return nil, err
		}
	}
	pcLayers, indexes, err := pineconeLayers(cfg.Pinecone, os.Getenv, log)
	if err != nil {
		if store != nil {
			store.Close()
		}
		stop()
		return nil, err
	}
	layers = append(layers, pcLayers...)
	f := &forgetting{store: store, pinecone: indexes, ctx: ctx, stop: stop}
	e, err := engine.New(engine.Config{
		Ledger: c.ledger, Hasher: c.hasher, Layers: layers,
		Certifier: certifier,
		Deadline:  fc.Deadline.D(), TokenTTL: fc.TokenTTL.D(),
		Tombstoned: c.tombstones.Set, Logger: log, Owner: engineOwner(fc.Admin.Listen),
		Settle: walSettle(cfg.Capture, store, c.ledger),
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	f.engine = e
	c.capture.OnLateWrite(e) // the WAL follower's late writes are deleted through it
	e.Start(time.Minute)
	go c.tombstones.Watch(ctx, c.ledger, cfg.Forget.TombstoneRefresh.D(), log)
	log.Info("forget enabled", "key_id", signer.KeyID(), "log_origin", fc.LogOrigin, "layers", len(layers))
	return f, nil
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
		RulesSHA256: rulesDigest(cfg.Capture.Tables, cfg.Pinecone.Indexes), Tool: "lethe-proxy " + version,
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

// pgLayers prepares every configured table for forget. A table that does
// not exist yet (an application that creates it on first use) is warned
// about, not refused: forget counts it as holding nothing until it appears.
func pgLayers(ctx context.Context, store *pgstore.Store, tables []config.TableRule, log *slog.Logger) ([]connector.Layer, error) {
	var layers []connector.Layer
	for _, t := range tables {
		pt, err := pgstore.ParseTable(t.Table, t.ID, t.Subjects)
		if err != nil {
			return nil, err
		}
		l, err := pgstore.NewLayer(ctx, store, pt, t.Vacuum)
		if err != nil {
			return nil, fmt.Errorf("capture.tables %s: %w", t.Table, err)
		}
		if !l.Found() {
			log.Warn("a configured table does not exist yet: writes to it are captured once it is created; "+
				"until then forget finds nothing there and its certificates say the table did not exist",
				"table", t.Table)
		}
		layers = append(layers, l)
	}
	return layers, nil
}

// adminConfig is the admin API of this proxy: the engine, the tokens, a
// readiness check of the ledger and the store, and capture's counters.
func (f *forgetting) adminConfig(cfg *config.Config, c *captured, log *slog.Logger) (admin.Config, error) {
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
			if f.store == nil {
				return nil
			}
			return f.store.Ping(ctx)
		},
		Metrics: func() map[string]float64 {
			m := map[string]float64{"lethe_tombstones": float64(c.tombstones.Len())}
			c.capture.Stats.Metrics(m)
			if c.wal != nil {
				c.wal.follower.Stats.Metrics(m)
			}
			if c.followed != nil {
				m["lethe_capture_followed_tables"] = float64(c.followed.Len())
			}
			if c.coverage != nil {
				m["lethe_coverage_uncovered_tables"] = float64(c.coverage.UncoveredTables())
			}
			return m
		},
	}, nil
}
