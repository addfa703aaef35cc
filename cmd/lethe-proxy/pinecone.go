package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

// newPineconeServer builds the Pinecone relay's HTTP server from
// cfg.Pinecone, capturing through hook when it is not nil, or returns nil
// when no index is configured.
func newPineconeServer(cfg *config.Config, hook *pcapture.Hook, log *slog.Logger) (*http.Server, *pinecone.Relay, error) {
	p := cfg.Pinecone
	if len(p.Indexes) == 0 {
		return nil, nil, nil
	}
	indexes := make([]*pinecone.Index, 0, len(p.Indexes))
	for _, ic := range p.Indexes {
		u, err := url.Parse(ic.Host) // validated by config
		if err != nil {
			return nil, nil, fmt.Errorf("pinecone index %q: host: %w", ic.Name, err)
		}
		ix := &pinecone.Index{Name: ic.Name, Upstream: u}
		if ic.UpstreamCAFile != "" {
			if ix.RootCAs, err = config.LoadCertPool(ic.UpstreamCAFile); err != nil {
				return nil, nil, fmt.Errorf("pinecone index %q: upstream_ca_file: %w", ic.Name, err)
			}
		}
		indexes = append(indexes, ix)
	}
	pc := pinecone.Config{
		Indexes:          indexes,
		MaxRequestBytes:  int64(p.MaxRequestSize),
		MaxBufferedBytes: int64(p.MaxBufferedSize),
		BodyTimeout:      p.BodyTimeout.D(),
		Logger:           log.With("relay", "pinecone"),
	}
	if hook != nil {
		pc.Hook = hook
	}
	relay, err := pinecone.New(pc)
	if err != nil {
		return nil, nil, err
	}
	var tlsConf *tls.Config
	if p.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(p.TLS.CertFile, p.TLS.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("pinecone.tls: loading %s / %s: %w", p.TLS.CertFile, p.TLS.KeyFile, err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return relay.Server(tlsConf), relay, nil
}
