package pcwing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// Listen resolves the Pinecone intents a crash left pending, with a
// capture core (startRecovery: before binding, so that a client finds its
// earlier writes settled; then every capture.recovery_interval), starts
// the settler of deletes by filter (settle.go) and restore detection
// (restore.go: a restore waiting for replay holds writes from the first
// request), builds
// the relay (reading each index's upstream_ca_file and pinecone.tls's
// files) and binds pinecone.listen, then, with a pinecone.control_plane
// block, the control-plane relay and its listener. On an error nothing is
// bound.
func (w *Wing) Listen() error {
	if w.core != nil && w.recovery == nil {
		w.startRecovery()
	}
	if w.core != nil && w.settler == nil {
		w.startSettler()
	}
	if w.restoreWatch != nil && w.restore == nil {
		if err := w.startRestoreWatch(); err != nil {
			return err
		}
	}
	relay, err := w.newRelay()
	if err != nil {
		return err
	}
	tlsConf, err := loadServerTLS("pinecone.tls", w.settings.TLS)
	if err != nil {
		relay.Close()
		return err
	}
	ln, err := net.Listen("tcp", w.settings.Listen)
	if err != nil {
		relay.Close()
		return fmt.Errorf("pinecone.listen: %w (is another process using it? change pinecone.listen)", err)
	}
	w.relay, w.server, w.listener = relay, relay.Server(tlsConf), ln
	if err := w.listenControlPlane(ln.Addr().String()); err != nil {
		ln.Close()
		relay.Close()
		w.relay, w.server, w.listener = nil, nil, nil
		return err
	}
	return nil
}

// Addr is the bound address, once Listen has succeeded.
func (w *Wing) Addr() net.Addr {
	if w.listener == nil {
		return nil
	}
	return w.listener.Addr()
}

// Serve serves REST and gRPC on the bound listener, and the control plane
// on its own when configured, until Shutdown, then returns nil; any other
// return is the first listener's failure. It starts the backstop scan
// Prepare opened, which Shutdown stops.
func (w *Wing) Serve() error {
	if w.server == nil {
		return errors.New("pinecone wing: Serve before Listen")
	}
	w.log.Info("pinecone relay started", "listen", w.listener.Addr().String(),
		"indexes", len(w.settings.Indexes), "tls", w.server.TLSConfig != nil)
	if w.backstop != nil {
		w.backstop.start()
	}
	if w.cpServer == nil {
		return pinecone.Serve(w.server, w.listener)
	}
	w.log.Info("pinecone control plane relay started", "listen", w.cpListener.Addr().String(),
		"upstream", w.settings.ControlPlane.UpstreamURL(), "tls", w.cpServer.TLSConfig != nil)
	served := make(chan error, 2) // the one not awaited ends at Shutdown
	go func() { served <- pinecone.Serve(w.server, w.listener) }()
	go func() { served <- pinecone.Serve(w.cpServer, w.cpListener) }()
	for range 2 {
		if err := <-served; err != nil {
			return err
		}
	}
	return nil
}

// Shutdown stops accepting, closes idle connections at once, lets the
// requests in flight be answered until ctx ends, then cuts the
// connections still busy (logged, not returned: the wing is stopped
// either way). A backstop scan and a settle in progress are cancelled
// first.
func (w *Wing) Shutdown(ctx context.Context) error {
	if w.settler != nil {
		w.settler.halt()
	}
	if w.backstop != nil {
		w.backstop.halt()
	}
	w.stopRecovery()
	for _, srv := range []*http.Server{w.server, w.cpServer} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(ctx); err != nil {
			w.log.Warn("shutdown timeout reached; busy Pinecone connections were closed", "err", err)
			srv.Close()
		}
	}
	w.stopRestoreWatch() // after the last answers: their LSNs are recorded
	return nil
}

// newRelay builds the relay to every configured index host, capturing
// through the wing's hook when it has one.
func (w *Wing) newRelay() (*pinecone.Relay, error) {
	p := w.settings
	indexes := make([]*pinecone.Index, 0, len(p.Indexes))
	for _, ic := range p.Indexes {
		u, err := url.Parse(ic.Host) // validated by config
		if err != nil {
			return nil, fmt.Errorf("pinecone index %q: host: %w", ic.Name, err)
		}
		ix := &pinecone.Index{Name: ic.Name, Upstream: u}
		if ic.UpstreamCAFile != "" {
			if ix.RootCAs, err = config.LoadCertPool(ic.UpstreamCAFile); err != nil {
				return nil, fmt.Errorf("pinecone index %q: upstream_ca_file: %w", ic.Name, err)
			}
		}
		indexes = append(indexes, ix)
	}
	pc := pinecone.Config{
		Indexes:          indexes,
		MaxRequestBytes:  int64(p.MaxRequestSize),
		MaxBufferedBytes: int64(p.MaxBufferedSize),
		BodyTimeout:      p.BodyTimeout.D(),
		Logger:           w.log.With("relay", "pinecone"),
	}
	if w.hook != nil { // a nil *Hook in the interface would be called
		pc.Hook = w.hook
	}
	return pinecone.New(pc)
}
