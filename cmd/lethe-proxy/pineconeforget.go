package main

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// pineconeLayers opens forget's connection to each configured index host
// (the index itself, not this proxy's relay) and returns the layers of its
// namespace rules, with the indexes to close. The API key is read from the
// index's api_key_env variable; an https host without one cannot start,
// an http:// host (Pinecone Local) is sent a placeholder.
func pineconeLayers(p config.Pinecone, getenv func(string) string, log *slog.Logger) ([]connector.Layer, []*pcstore.Index, error) {
	var (
		layers  []connector.Layer
		indexes []*pcstore.Index
	)
	closeAll := func() {
		for _, ix := range indexes {
			ix.Close()
		}
	}
	for _, ic := range p.Indexes {
		if len(ic.Namespaces) == 0 {
			continue // no rule: nothing of it is captured, nothing to forget
		}
		ix, err := openPineconeIndex(p, ic, getenv, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		indexes = append(indexes, ix)
		rules := make([]pcstore.Rule, 0, len(ic.Namespaces))
		for _, r := range ic.Namespaces {
			rules = append(rules, pcstore.Rule{Namespace: r.Namespace, Fields: r.Subjects})
		}
		ls, err := ix.Layers(rules)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		layers = append(layers, ls...)
	}
	return layers, indexes, nil
}

// openPineconeIndex opens forget's (or sweep's) connection to the index
// host of ic. The API key is read from the index's api_key_env variable; an
// https host without one is refused, an http:// host (Pinecone Local) is
// sent a placeholder.
func openPineconeIndex(p config.Pinecone, ic config.PineconeIndex, getenv func(string) string, log *slog.Logger) (*pcstore.Index, error) {
	cfg := pcstore.Config{Name: ic.Name, Host: ic.Host, APIKey: getenv(ic.KeyEnv()), VerifyDeadline: p.VerifyDeadline.D()}
	if cfg.APIKey == "" {
		if u, err := url.Parse(ic.Host); err == nil && u.Scheme == "https" {
			return nil, fmt.Errorf("pinecone index %q: forget and sweep need an API key for %s: set the environment variable %s (the key never goes in the config file)", ic.Name, ic.Host, ic.KeyEnv())
		}
		log.Warn("no Pinecone API key for forget or sweep; an http:// index host (Pinecone Local) accepts any", "index", ic.Name, "env", ic.KeyEnv())
	}
	if ic.UpstreamCAFile != "" {
		pool, err := config.LoadCertPool(ic.UpstreamCAFile)
		if err != nil {
			return nil, fmt.Errorf("pinecone index %q: upstream_ca_file: %w", ic.Name, err)
		}
		cfg.RootCAs = pool
	}
	return pcstore.Open(cfg)
}

// rulesDigest is config's RulesDigest of these rules, until forget.go
// calls cfg.RulesDigest itself.
func rulesDigest(tables []config.TableRule, indexes []config.PineconeIndex) string {
	return (&config.Config{Capture: config.Capture{Tables: tables}, Pinecone: config.Pinecone{Indexes: indexes}}).RulesDigest()
}
