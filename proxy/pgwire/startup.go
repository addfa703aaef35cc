package pgwire

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Startup packet request codes (protocol.html, "Message Formats").
const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102
	protocolMajor3    = 3
)

// maxStartupPacket is PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
const maxStartupPacket = 10000

// startupTimeout bounds how long a client may take to finish startup and
// authentication, so half-open connections cannot pile up.
const startupTimeout = 60 * time.Second

// tlsHandshakeByte starts a TLS record; PostgreSQL 17 clients using
// sslnegotiation=direct open with it instead of an SSLRequest.
const tlsHandshakeByte = 0x16

// serveConn takes one accepted connection through startup and, for a
// regular session, into the relay.
func (s *Server) serveConn(conn net.Conn) {
	defer conn.Close()
	log := s.logger().With("client", conn.RemoteAddr().String())
	conn.SetDeadline(time.Now().Add(startupTimeout))

	conn, packet, err := s.negotiate(conn)
	if err != nil {
		log.Info("startup failed", "err", err)
		if ce, ok := err.(*clientError); ok {
			writeError(conn, ce.fields)
		}
		return
	}
	code := binary.BigEndian.Uint32(packet)
	if code == cancelRequestCode {
		s.forwardCancel(packet, log)
		return
	}
	var startup pgproto3.StartupMessage
	if err := startup.Decode(packet); err != nil {
		log.Info("bad startup message", "err", err)
		writeError(conn, protocolViolation(fmt.Sprintf("lethe-proxy: bad startup message: %v", err)))
		return
	}
	if _, isTLS := conn.(*tls.Conn); s.RequireTLS && !isTLS {
		log.Info("refused plaintext client", "user", startup.Parameters["user"])
		writeError(conn, errorFields{
			Severity: "FATAL", Code: "28000",
			Message: "lethe-proxy: this proxy requires TLS",
			Hint:    "connect with sslmode=require (or stricter)",
		})
		return
	}
	s.startSession(conn, packet, &startup, log)
}

// negotiate answers SSLRequest and GSSENCRequest packets until the client
// sends a startup or cancel packet, which it returns. The returned conn is
// the TLS conn when TLS was negotiated.
func (s *Server) negotiate(conn net.Conn) (net.Conn, []byte, error) {
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		return conn, nil, err
	}
	if first[0] == tlsHandshakeByte {
		if s.TLS == nil {
			return conn, nil, fmt.Errorf("direct TLS attempted but the proxy has no TLS certificate configured")
		}
		cfg := s.TLS.Clone()
		cfg.NextProtos = []string{"postgresql"}
		tconn := tls.Server(&prefixConn{Conn: conn, prefix: first[:]}, cfg)
		if err := tconn.Handshake(); err != nil {
			return conn, nil, fmt.Errorf("direct TLS handshake: %w", err)
		}
		conn = tconn
		packet, err := readStartupPacket(conn, nil)
		return conn, packet, err
	}
	prefix := first[:]
	for {
		packet, err := readStartupPacket(conn, prefix)
		prefix = nil
		if err != nil {
			return conn, nil, err
		}
		switch binary.BigEndian.Uint32(packet) {
		case sslRequestCode:
			_, already := conn.(*tls.Conn)
			if s.TLS == nil || already {
				if _, err := conn.Write([]byte{'N'}); err != nil {
					return conn, nil, err
				}
				continue
			}
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return conn, nil, err
			}
			// Nothing beyond the SSLRequest has been read, so no plaintext
			// can leak into the TLS session (CVE-2021-23222).
			tconn := tls.Server(conn, s.TLS)
			if err := tconn.Handshake(); err != nil {
				return conn, nil, fmt.Errorf("TLS handshake: %w", err)
			}
			conn = tconn
		case gssEncRequestCode:
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return conn, nil, err
			}
		default:
			return conn, packet, nil
		}
	}
}

// readStartupPacket reads one length-prefixed startup-phase packet and
// returns it without the length. prefix holds bytes already read.
func readStartupPacket(r io.Reader, prefix []byte) ([]byte, error) {
	var hdr [4]byte
	n := copy(hdr[:], prefix)
	if _, err := io.ReadFull(r, hdr[n:]); err != nil {
		return nil, err
	}
	length := int(binary.BigEndian.Uint32(hdr[:]))
	if length < 8 || length > maxStartupPacket {
		return nil, &clientError{protocolViolation(fmt.Sprintf("lethe-proxy: invalid startup packet length %d", length))}
	}
	packet := make([]byte, length-4)
	if _, err := io.ReadFull(r, packet); err != nil {
		return nil, err
	}
	if binary.BigEndian.Uint32(packet)>>16 != protocolMajor3 &&
		binary.BigEndian.Uint32(packet)>>16 != 1234 { // 1234 is the request-code space
		return nil, &clientError{errorFields{
			Severity: "FATAL", Code: "0A000",
			Message: fmt.Sprintf("lethe-proxy: unsupported frontend protocol %d.%d", binary.BigEndian.Uint32(packet)>>16, binary.BigEndian.Uint32(packet)&0xffff),
			Hint:    "use protocol version 3",
		}}
	}
	return packet, nil
}

// prefixConn replays bytes already read before reading from Conn.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// withLength prepends the int32 length a startup packet travels with.
func withLength(packet []byte) []byte {
	out := make([]byte, 4+len(packet))
	binary.BigEndian.PutUint32(out, uint32(4+len(packet)))
	copy(out[4:], packet)
	return out
}
