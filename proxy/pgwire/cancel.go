package pgwire

import (
	"context"
	"encoding/binary"
	"log/slog"
	"time"
)

// cancelTimeout bounds the whole forwarding of one CancelRequest.
const cancelTimeout = 10 * time.Second

// forwardCancel relays a CancelRequest (protocol 3.0 four-byte keys or 3.2
// keys up to 256 bytes) to the upstream when the key belongs to one of this
// proxy's live sessions. Unknown keys are dropped: the proxy does not let
// anyone probe the upstream's backends. A cancel gets no reply either way.
func (s *Server) forwardCancel(packet []byte, log *slog.Logger) {
	key := string(packet[4:]) // process id + secret key, as BackendKeyData carried them
	if len(packet) < 12 || s.sessionByCancelKey(key) == nil {
		log.Info("cancel request for an unknown session ignored")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
	defer cancel()
	conn, err := s.Upstream.Dial(ctx)
	if err != nil {
		log.Warn("cancel request not forwarded: upstream unreachable", "err", err)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(cancelTimeout))
	if _, err := conn.Write(withLength(packet)); err != nil {
		log.Warn("cancel request not forwarded", "err", err)
		return
	}
	// Wait for the server to close, so the cancel has been processed
	// before we return (libpq does the same).
	var b [1]byte
	conn.Read(b[:])
	log.Debug("cancel request forwarded", "pid", binary.BigEndian.Uint32(packet[4:]))
}
