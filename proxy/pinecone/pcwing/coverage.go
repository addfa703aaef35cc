package pcwing

import (
	"context"
	"errors"
	"fmt"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Coverage asks each configured index, rules or not, for its namespaces
// (describe_index_stats) and judges them by p: a namespace without a rule
// or a coverage.ignore is a finding. The connections are closed before it
// returns.
func (w *Wing) Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error) {
	var r coverage.Report
	for _, ic := range w.settings.Indexes {
		namespaces, err := w.namespaces(ctx, ic)
		if err != nil {
			return coverage.Report{}, err
		}
		r.NamespacesChecked += len(namespaces)
		r.Findings = append(r.Findings, coverage.CheckNamespaces(p, ic.Name, namespaces)...)
	}
	return r, nil
}

// namespaces lists ic's namespaces through a connection of its own.
func (w *Wing) namespaces(ctx context.Context, ic config.PineconeIndex) ([]string, error) {
	pc := pcstore.Config{Name: ic.Name, Host: ic.Host, APIKey: w.getenv(ic.KeyEnv())}
	if ic.UpstreamCAFile != "" {
		pool, err := config.LoadCertPool(ic.UpstreamCAFile)
		if err != nil {
			return nil, fmt.Errorf("pinecone index %q: upstream_ca_file: %w", ic.Name, err)
		}
		pc.RootCAs = pool
	}
	ix, err := pcstore.Open(pc)
	if errors.Is(err, pcstore.ErrNoAPIKey) {
		return nil, fmt.Errorf("%w: set the environment variable %s (the key never goes in the config file)", err, ic.KeyEnv())
	} else if err != nil {
		return nil, err
	}
	defer ix.Close()
	return ix.Namespaces(ctx)
}
