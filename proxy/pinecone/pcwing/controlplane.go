package pcwing

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pinecone/controlplane"
)

// listenControlPlane builds the control-plane relay of
// pinecone.control_plane and binds its listener; dataPlane is the bound
// data-plane address, advertised when advertise_host is unset. Without a
// control_plane block it does nothing.
func (w *Wing) listenControlPlane(dataPlane string) error {
	cp := w.settings.ControlPlane
	if cp == nil {
		return nil
	}
	u, err := url.Parse(cp.UpstreamURL()) // validated by config
	if err != nil {
		return fmt.Errorf("pinecone.control_plane.upstream: %w", err)
	}
	cfg := controlplane.Config{Upstream: u, Hosts: w.settings.AdvertisedHosts(dataPlane),
		UpstreamHosts: map[string]string{}, Logger: w.log.With("relay", "pinecone-control-plane")}
	for _, ix := range w.settings.Indexes {
		if host, err := url.Parse(ix.Host); err == nil {
			cfg.UpstreamHosts[ix.Name] = host.Host
		}
	}
	if cp.UpstreamCAFile != "" {
		if cfg.RootCAs, err = config.LoadCertPool(cp.UpstreamCAFile); err != nil {
			return fmt.Errorf("pinecone.control_plane.upstream_ca_file: %w", err)
		}
	}
	relay, err := controlplane.New(cfg)
	if err != nil {
		return err
	}
	tlsConf, err := loadServerTLS("pinecone.control_plane.tls", cp.TLS)
	if err != nil {
		relay.Close()
		return err
	}
	ln, err := net.Listen("tcp", cp.Listen)
	if err != nil {
		relay.Close()
		return fmt.Errorf("pinecone.control_plane.listen: %w (is another process using it? change pinecone.control_plane.listen)", err)
	}
	w.cpRelay, w.cpListener = relay, ln
	w.cpServer = &http.Server{Handler: relay, TLSConfig: tlsConf, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: w.server.ErrorLog}
	return nil
}

// ControlPlaneAddr is the control-plane listener's bound address, or nil
// without one.
func (w *Wing) ControlPlaneAddr() net.Addr {
	if w.cpListener == nil {
		return nil
	}
	return w.cpListener.Addr()
}

// loadServerTLS is a served certificate, or nil to serve cleartext; key
// names the setting in errors.
func loadServerTLS(key string, t config.ServerTLS) (*tls.Config, error) {
	if t.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s: loading %s / %s: %w", key, t.CertFile, t.KeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
