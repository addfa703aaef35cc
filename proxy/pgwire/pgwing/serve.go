package pgwing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// Listen resolves the intents a crash left pending (recoverIntents: the
// store must answer) and compares the server with what the ledger saw of
// it (watchRestore: a restore holds writes until replay), then builds the relay (reading
// postgres.upstream_ca_file and postgres.tls's files) and binds
// postgres.listen; a wing without postgres.upstream binds nothing. On an
// error nothing is bound.
func (w *Wing) Listen() error {
	if w.core != nil {
		ctx, cancel := context.WithTimeout(context.Background(), recoveryTimeout)
		err := w.recoverIntents(ctx, w.work)
		if err == nil && w.cfg.Capture.Store != "" {
			err = w.watchRestore(ctx, w.work) // restore.go
		}
		cancel()
		if err != nil {
			return err
		}
	}
	if w.cfg.Postgres.Upstream == "" {
		return nil
	}
	srv, err := w.newServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", w.cfg.Postgres.Listen)
	if err != nil {
		return fmt.Errorf("postgres.listen: %w (is another process using it? change postgres.listen)", err)
	}
	w.server, w.listener = srv, ln
	return nil
}

// Addr is the bound address, once Listen has bound one.
func (w *Wing) Addr() net.Addr {
	if w.listener == nil {
		return nil
	}
	return w.listener.Addr()
}

// Serve relays on the bound listener until Shutdown, then returns nil;
// any other return is the listener's failure. Without a listener it
// returns at Shutdown.
func (w *Wing) Serve() error {
	if w.listener == nil {
		<-w.stopped
		return nil
	}
	p := w.cfg.Postgres
	w.log.Info("postgres relay started", "listen", w.listener.Addr().String(), "upstream", p.Upstream, "upstream_tls", p.UpstreamTLS)
	if err := w.server.Serve(w.listener); !errors.Is(err, pgwire.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting, ends each session once it is idle, closes
// those still busy when ctx ends (logged, not returned: the wing is
// stopped either way), then stops the follower, the recovery and the
// catalog watch.
func (w *Wing) Shutdown(ctx context.Context) error {
	select {
	case <-w.stopped:
	default:
		close(w.stopped)
	}
	if w.server != nil {
		if err := w.server.Shutdown(ctx); err != nil {
			w.log.Warn("shutdown timeout reached; busy sessions were closed", "err", err)
		}
	}
	w.stopBackground()
	return nil
}

// newServer is the relay of postgres.*, observed by the capture adapter
// when there is one.
func (w *Wing) newServer() (*pgwire.Server, error) {
	p := w.cfg.Postgres
	up := &pgwire.Upstream{
		Addr:        p.Upstream,
		TLSMode:     pgwire.TLSMode(p.UpstreamTLS),
		DialTimeout: p.ConnectTimeout.D(),
		TLS:         &tls.Config{ServerName: p.UpstreamServerName, MinVersion: tls.VersionTLS12},
	}
	if p.UpstreamCAFile != "" {
		pem, err := os.ReadFile(p.UpstreamCAFile)
		if err != nil {
			return nil, fmt.Errorf("postgres.upstream_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("postgres.upstream_ca_file: no PEM certificate in %s", p.UpstreamCAFile)
		}
		up.TLS.RootCAs = pool
	}
	srv := &pgwire.Server{
		Upstream:       up,
		RequireTLS:     p.TLS.Required,
		MaxMessageSize: int(p.MaxMessageSize),
		Logger:         w.log,
	}
	if w.observer != nil {
		srv.Observer = w.observer
	}
	if p.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(p.TLS.CertFile, p.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("postgres.tls: loading %s / %s: %w", p.TLS.CertFile, p.TLS.KeyFile, err)
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return srv, nil
}
