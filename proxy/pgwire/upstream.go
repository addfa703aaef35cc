package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// TLSMode is how the proxy secures its connection to the upstream server,
// with libpq's meaning of the sslmode values of the same names.
type TLSMode string

const (
	TLSDisable    TLSMode = "disable"     // plaintext
	TLSRequire    TLSMode = "require"     // encrypted, server certificate not checked
	TLSVerifyFull TLSMode = "verify-full" // encrypted, chain and host name checked
)

// Upstream is the PostgreSQL server sessions are relayed to.
type Upstream struct {
	Addr        string // host:port
	TLSMode     TLSMode
	TLS         *tls.Config // RootCAs and ServerName for verify-full
	DialTimeout time.Duration
}

// Dial opens a connection to the upstream and negotiates TLS per TLSMode.
func (u *Upstream) Dial(ctx context.Context) (net.Conn, error) {
	timeout := u.DialTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", u.Addr)
	if err != nil {
		return nil, err
	}
	if u.TLSMode == "" || u.TLSMode == TLSDisable {
		return conn, nil
	}
	tconn, err := u.startTLS(conn, timeout)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tconn, nil
}

func (u *Upstream) startTLS(conn net.Conn, timeout time.Duration) (net.Conn, error) {
	conn.SetDeadline(time.Now().Add(timeout))
	defer conn.SetDeadline(time.Time{})
	var req [8]byte
	binary.BigEndian.PutUint32(req[0:], 8)
	binary.BigEndian.PutUint32(req[4:], sslRequestCode)
	if _, err := conn.Write(req[:]); err != nil {
		return nil, err
	}
	var answer [1]byte
	if _, err := io.ReadFull(conn, answer[:]); err != nil {
		return nil, err
	}
	if answer[0] != 'S' {
		return nil, fmt.Errorf("upstream %s does not accept TLS (answered %q) but upstream_tls is %q", u.Addr, answer[0], u.TLSMode)
	}
	cfg := &tls.Config{}
	if u.TLS != nil {
		cfg = u.TLS.Clone()
	}
	switch u.TLSMode {
	case TLSRequire:
		cfg.InsecureSkipVerify = true // libpq's sslmode=require checks no certificate
	case TLSVerifyFull:
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(u.Addr)
			cfg.ServerName = host
		}
	default:
		return nil, fmt.Errorf("unknown upstream TLS mode %q", u.TLSMode)
	}
	tconn := tls.Client(conn, cfg)
	if err := tconn.Handshake(); err != nil {
		return nil, fmt.Errorf("TLS handshake with upstream %s: %w", u.Addr, err)
	}
	return tconn, nil
}
