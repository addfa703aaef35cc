package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/config"
)

// listeners are the proxy's bound addresses, before anything is served.
type listeners struct {
	postgres net.Listener    // nil without postgres.upstream
	pinecone net.Listener    // nil without the Pinecone relay
	admin    *admin.Listener // nil without forget
}

// listen binds every listener the config names, and reads the admin API's
// tokens and TLS files: a port taken or a file that does not load stops
// the start here, before it makes anything it would have to undo (the
// WAL follower's slot). On an error nothing stays bound.
func listen(cfg *config.Config, pinecone bool, fg *forgetting, capt *captured, log *slog.Logger) (ls listeners, err error) {
	defer func() {
		if err != nil {
			ls.close()
		}
	}()
	// The PostgreSQL relay runs when it has an upstream; a proxy for
	// Pinecone alone has none (config checks that one of them is set).
	if cfg.Postgres.Upstream != "" {
		if ls.postgres, err = net.Listen("tcp", cfg.Postgres.Listen); err != nil {
			return ls, fmt.Errorf("postgres.listen: %w (is another process using it? change postgres.listen)", err)
		}
	}
	if pinecone {
		if ls.pinecone, err = net.Listen("tcp", cfg.Pinecone.Listen); err != nil {
			return ls, fmt.Errorf("pinecone.listen: %w (is another process using it? change pinecone.listen)", err)
		}
	}
	if fg != nil {
		acfg, err := fg.adminConfig(cfg, capt, log)
		if err != nil {
			return ls, err
		}
		a := cfg.Forget.Admin
		if ls.admin, err = admin.Listen(acfg, a.Listen, a.TLS.CertFile, a.TLS.KeyFile); err != nil {
			return ls, fmt.Errorf("forget.admin: %w", err)
		}
	}
	return ls, nil
}

// close gives back whatever is bound, for a start that stops before
// serving.
func (ls listeners) close() {
	for _, ln := range []net.Listener{ls.postgres, ls.pinecone} {
		if ln != nil {
			ln.Close()
		}
	}
	if ls.admin != nil {
		ls.admin.Close()
	}
}
