package forgetopen

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// Certifier is the certifier of cfg's forget section over the
// transparency log kept in l, once the log has recorded its signing key
// (a key.rotated event, appended only when the key is not the one that
// signed the log's latest checkpoint), so that no certificate or report in
// the log is signed by a key the log never announced. tool names the
// program in what it signs ("lethe-proxy 0.1.0").
func Certifier(ctx context.Context, cfg *config.Config, l *ledger.Handle, tool string, log *slog.Logger) (*engine.Certifier, *certificate.Signer, error) {
	certifier, signer, err := newCertifier(cfg, l, tool)
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
// log kept in l; Certifier records the key in the log first.
func newCertifier(cfg *config.Config, l *ledger.Handle, tool string) (*engine.Certifier, *certificate.Signer, error) {
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
		RulesSHA256: cfg.RulesDigest(), Tool: tool,
	}), signer, nil
}

// trustedKeys reads the published key set, or trusts the signing key
// alone for the log origin when none is configured.
func trustedKeys(file, logOrigin string, signer *certificate.Signer) (certificate.KeySet, error) {
	if file == "" {
		return certificate.NewKeySet(logOrigin, signer.TrustedKey(time.Unix(0, 0).UTC()))
	}
	keys, err := certificate.ReadKeySet(file)
	if err != nil {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys: %w", err)
	}
	if keys.LogOrigin() != logOrigin {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys %s is for log %q, but forget.log_origin is %q: certificates would not verify against it; make them the same", file, keys.LogOrigin(), logOrigin)
	}
	if _, ok := keys.Lookup(signer.KeyID()); !ok {
		return certificate.KeySet{}, fmt.Errorf("forget.trusted_keys %s does not list the signing key %s: add the entry lethe-proxy keygen printed", file, signer.KeyID())
	}
	return keys, nil
}
