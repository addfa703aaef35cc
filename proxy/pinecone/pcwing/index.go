package pcwing

import (
	"context"
	"fmt"
	"net/url"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// openIndex opens forget's (or reconcile's, or sweep's) connection to the
// index host of ic. The API key is read from the index's api_key_env
// variable; an https host without one is refused, an http:// host
// (Pinecone Local) is sent a placeholder. The index's api decides which
// data plane the connection speaks (vectors over gRPC, or documents).
// pace, when not nil, paces its page-by-page reads (pcstore.Config.Pace).
func (w *Wing) openIndex(ic config.PineconeIndex, pace func(context.Context) error) (*pcstore.Index, error) {
	cfg := pcstore.Config{Name: ic.Name, Host: ic.Host, APIKey: w.getenv(ic.KeyEnv()), VerifyDeadline: w.settings.VerifyDeadline.D(),
		API: pcstore.API(ic.DataPlane()), Pace: pace}
	if cfg.APIKey == "" {
		if u, err := url.Parse(ic.Host); err == nil && u.Scheme == "https" {
			return nil, fmt.Errorf("pinecone index %q: forget and sweep need an API key for %s: set the environment variable %s (the key never goes in the config file)", ic.Name, ic.Host, ic.KeyEnv())
		}
		w.log.Warn("no Pinecone API key for forget or sweep; an http:// index host (Pinecone Local) accepts any", "index", ic.Name, "env", ic.KeyEnv())
	}
	if w.restoreWatch != nil {
		cfg.WatchWrite = w.restoreWatch.forgetWrites(ic.Name)
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

// rules are ic's namespace rules as the store connector takes them.
func rules(ic config.PineconeIndex) []pcstore.Rule {
	out := make([]pcstore.Rule, 0, len(ic.Namespaces))
	for _, r := range ic.Namespaces {
		out = append(out, pcstore.Rule{Namespace: r.Namespace, Fields: r.Subjects, RetainBy: r.RetainBy})
	}
	return out
}

// closeAll closes indexes.
func closeAll(indexes []*pcstore.Index) {
	for _, ix := range indexes {
		ix.Close()
	}
}
