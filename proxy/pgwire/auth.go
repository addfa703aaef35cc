package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Authentication request codes carried by the server's 'R' message.
const (
	authOK                = 0
	authCleartext         = 3
	authMD5               = 5
	authGSS               = 7
	authGSSContinue       = 8
	authSSPI              = 9
	authSASL              = 10
	authSASLContinue      = 11
	authSASLFinal         = 12
	scramPlusMechanism    = "SCRAM-SHA-256-PLUS"
	maxAuthMessageLength  = 1 << 16
	backendKeyDataMinBody = 8
)

// authResult is what the proxy learns while relaying authentication.
type authResult struct {
	cancelKey string // process id and secret key from BackendKeyData
	// parameters are the server's ParameterStatus reports, by name.
	parameters map[string]string
}

// channelBinding says what SCRAM channel binding can do across this relay.
type channelBinding struct {
	// passthrough: the client sees the same certificate as the upstream
	// presents to the proxy, so tls-server-end-point binding data agree and
	// SCRAM-SHA-256-PLUS may be offered as the server offers it.
	passthrough bool
	// upstreamTLS: the upstream connection is TLS, so the server refuses a
	// client that supports channel binding but was not offered it ("y" flag).
	upstreamTLS bool
}

// relayAuth passes authentication through message by message until the
// server's first ReadyForQuery, which it forwards too. It returns an error
// (already relayed to the client when it came from the server) if the
// session did not start.
func relayAuth(client, server net.Conn, cb channelBinding) (authResult, error) {
	var res authResult
	for {
		typ, body, err := readMessage(server, maxAuthMessageLength)
		if err != nil {
			return res, fmt.Errorf("reading from upstream during authentication: %w", err)
		}
		needsAnswer, saslStart := false, false
		switch typ {
		case 'R':
			if len(body) < 4 {
				return res, fmt.Errorf("upstream sent a short authentication request")
			}
			switch binary.BigEndian.Uint32(body) {
			case authSASL:
				if !cb.passthrough {
					body = withoutChannelBinding(body)
				}
				needsAnswer, saslStart = true, true
			case authCleartext, authMD5, authSASLContinue:
				needsAnswer = true
			case authGSS, authSSPI, authGSSContinue:
				// A GSSAPI exchange may end with a server token the client
				// does not answer, which a message-by-message relay cannot
				// tell from one it must wait for. Refuse clearly rather than hang.
				writeError(client, errGSSUnsupported)
				return res, errors.New("GSSAPI/SSPI authentication is not supported through the proxy")
			}
		case 'K':
			if len(body) < backendKeyDataMinBody {
				return res, fmt.Errorf("upstream sent a short BackendKeyData")
			}
			res.cancelKey = string(body)
		case 'S':
			var p pgproto3.ParameterStatus
			if err := p.Decode(body); err == nil {
				if res.parameters == nil {
					res.parameters = map[string]string{}
				}
				res.parameters[p.Name] = p.Value
			}
		}
		if err := writeMessage(client, typ, body); err != nil {
			return res, err
		}
		switch typ {
		case 'E':
			return res, fmt.Errorf("upstream refused the session: %s", errorField(body, 'M'))
		case 'Z':
			return res, nil
		}
		if needsAnswer {
			ctyp, cbody, err := readMessage(client, maxAuthMessageLength)
			if err != nil {
				return res, fmt.Errorf("reading client authentication response: %w", err)
			}
			if saslStart && ctyp == 'p' && cb.upstreamTLS && !cb.passthrough && scramFlag(cbody) == 'y' {
				writeError(client, errChannelBinding)
				return res, errors.New("client supports SCRAM channel binding, which cannot cross this proxy")
			}
			if err := writeMessage(server, ctyp, cbody); err != nil {
				return res, err
			}
		}
	}
}

// errChannelBinding explains the one SCRAM combination a relay cannot carry.
var errChannelBinding = errorFields{
	Severity: "FATAL", Code: "28000",
	Message: "lethe-proxy: SCRAM channel binding cannot cross this proxy: the client supports it over TLS, " +
		"the proxy's certificate differs from the PostgreSQL server's, and the server (reached over TLS) refuses clients that support binding but are not offered it",
	Hint: "either give postgres.tls the PostgreSQL server's own certificate and key (binding then passes through), " +
		"or set upstream_tls: disable on a trusted network, or connect with channel_binding=disable",
}

var errGSSUnsupported = errorFields{
	Severity: "FATAL", Code: "28000",
	Message: "lethe-proxy: GSSAPI/SSPI (Kerberos) authentication is not supported through the proxy",
	Hint:    "use scram-sha-256 for this role in pg_hba.conf",
}

// scramFlag returns the GS2 channel-binding flag ('n', 'y' or 'p') of a
// SASLInitialResponse body (mechanism, int32 length, client-first-message),
// or 0 when the body is not one.
func scramFlag(body []byte) byte {
	i := bytes.IndexByte(body, 0)
	if i < 0 || len(body) < i+6 {
		return 0
	}
	return body[i+5]
}

// withoutChannelBinding removes SCRAM-SHA-256-PLUS from an
// AuthenticationSASL body. Channel binding ties SCRAM to the TLS session the
// client sees, which ends at this proxy, so it can never verify against the
// server; without the -PLUS offer, clients with channel_binding=prefer use
// plain SCRAM and clients that require it fail with their own clear error.
func withoutChannelBinding(body []byte) []byte {
	out := make([]byte, 4, len(body))
	copy(out, body[:4])
	rest := body[4:]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return body // malformed: let the client judge the server's bytes
		}
		mech := rest[:i+1]
		rest = rest[i+1:]
		if string(mech[:i]) != scramPlusMechanism {
			out = append(out, mech...)
		}
	}
	return out
}

// readMessage reads one framed message during the startup phase, where
// messages are few and small, so allocating is fine.
func readMessage(r io.Reader, maxLen int) (byte, []byte, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	length := int(binary.BigEndian.Uint32(hdr[1:]))
	if length < 4 || length > maxLen {
		return 0, nil, fmt.Errorf("%w: type %q, length %d", ErrMalformed, hdr[0], length)
	}
	body := make([]byte, length-4)
	_, err := io.ReadFull(r, body)
	return hdr[0], body, err
}

func writeMessage(w io.Writer, typ byte, body []byte) error {
	_, err := w.Write(appendMessage(nil, typ, body))
	return err
}

func appendMessage(dst []byte, typ byte, body []byte) []byte {
	dst = append(dst, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(4+len(body)))
	return append(dst, body...)
}
