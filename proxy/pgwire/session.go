package pgwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// session is one client connection relayed to its own upstream connection.
type session struct {
	id        uint64
	srv       *Server
	client    net.Conn
	server    net.Conn
	cancelKey string
	log       *slog.Logger
	obs       Session // nil without an Observer

	// Sessions are idle when every statement sent has been answered by a
	// ReadyForQuery with status 'I'. The client side counts the messages that
	// each end in one ReadyForQuery (Sync, Query, FunctionCall); the server
	// side counts ReadyForQuery messages.
	sent     atomic.Int64
	answered atomic.Int64
	txStatus atomic.Uint32

	fatal       atomic.Pointer[errorFields] // why the proxy ended the session
	serverFatal atomic.Bool                 // the server announced it is ending the session
	terminated  atomic.Bool                 // the client sent Terminate: the server's close is expected
	closeOnce   sync.Once

	refusals refusals
}

// startSession connects upstream, relays authentication and then the session.
func (s *Server) startSession(client net.Conn, packet []byte, startup *pgproto3.StartupMessage, log *slog.Logger) {
	user, database := startup.Parameters["user"], startup.Parameters["database"]
	log = log.With("user", user, "database", database)
	server, err := s.Upstream.Dial(context.Background())
	if err != nil {
		log.Warn("upstream unreachable", "upstream", s.Upstream.Addr, "err", err)
		writeError(client, errorFields{
			Severity: "FATAL", Code: "08006",
			Message: fmt.Sprintf("lethe-proxy: cannot connect to the upstream PostgreSQL server at %s: %v", s.Upstream.Addr, err),
			Hint:    "check that the server is running and that postgres.upstream in the proxy config is right",
		})
		return
	}
	defer server.Close()
	server.SetDeadline(time.Now().Add(startupTimeout))
	if _, err := server.Write(withLength(packet)); err != nil {
		log.Warn("upstream write failed during startup", "err", err)
		writeError(client, errUpstreamLost)
		return
	}
	auth, err := relayAuth(client, server, s.channelBinding(client, server))
	if err != nil {
		log.Info("session did not start", "err", err)
		return
	}
	client.SetDeadline(time.Time{})
	server.SetDeadline(time.Time{})

	ss := &session{
		id: s.nextID.Add(1), srv: s, client: client, server: server,
		cancelKey: auth.cancelKey,
	}
	ss.log = log.With("session", ss.id)
	ss.txStatus.Store('I')
	if !s.register(ss) {
		writeError(client, errShutdown)
		return
	}
	defer s.unregister(ss)
	if s.Observer != nil {
		ss.obs = s.Observer.Open(SessionInfo{
			ID: ss.id, ClientAddr: client.RemoteAddr(),
			User: user, Database: database, Parameters: startup.Parameters,
			ServerParameters: auth.parameters,
		})
	}
	if ss.obs != nil {
		defer ss.obs.Close()
	}
	ss.log.Debug("session started")
	ss.relay()
}

// channelBinding decides whether SCRAM-SHA-256-PLUS can pass through.
func (s *Server) channelBinding(client, server net.Conn) channelBinding {
	up, upTLS := server.(*tls.Conn)
	cb := channelBinding{upstreamTLS: upTLS}
	_, clientTLS := client.(*tls.Conn)
	if !upTLS || !clientTLS || s.TLS == nil || len(s.TLS.Certificates) == 0 {
		return cb
	}
	peer := up.ConnectionState().PeerCertificates
	own := s.TLS.Certificates[0].Certificate
	cb.passthrough = len(peer) > 0 && len(own) > 0 && bytes.Equal(peer[0].Raw, own[0])
	return cb
}

// relay runs the two directions until either side ends, then tells the
// client why if the proxy ended the session.
func (ss *session) relay() {
	up := newPump(ss.client, ss.server, ss.srv.MaxMessageSize)
	down := newPump(ss.server, ss.client, 0)
	up.inspect, up.handle = ss.inspectClient, ss.fromClient
	if w, ok := ss.obs.(Waiter); ok {
		up.flushFirst = w.WillWait
	}
	if st, ok := ss.obs.(Streamer); ok {
		up.stream = st.NeverRefuses
	}
	down.inspect, down.handle = ss.inspectServer, ss.fromServer

	upDone := make(chan error, 1)
	go func() {
		err := up.run()
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			ss.terminate(clientFault(err))
		} else {
			ss.server.Close() // the client left; the server sees its Terminate or EOF
		}
		upDone <- err
	}()

	downErr := down.run()
	// Whichever way the server-to-client side ended (the server left, or
	// the client stopped taking its results), the server connection goes
	// too: the client-to-server side may be blocked writing to a server
	// that is itself blocked writing results nobody reads, its transaction
	// open, until something closes it.
	ss.server.Close()
	if f := ss.fatal.Load(); f != nil {
		if down.atBoundary() {
			ss.farewell(*f)
		}
		ss.log.Info("session ended by proxy", "reason", f.Message)
	} else if !errors.Is(downErr, io.EOF) && !errors.Is(downErr, net.ErrClosed) {
		if down.dstFailed {
			ss.log.Info("client connection lost", "err", downErr)
		} else {
			ss.log.Warn("upstream connection lost", "err", downErr)
			if down.atBoundary() {
				ss.farewell(errUpstreamLost)
			}
		}
	} else if errors.Is(downErr, io.EOF) && down.atBoundary() && !ss.serverFatal.Load() && !ss.terminated.Load() {
		// The server closed (it sends its own FATAL first when it can); say
		// what happened in case it could not.
		ss.farewell(errUpstreamLost)
	}
	ss.client.Close()
	upErr := <-upDone
	ss.log.Debug("session ended", "client_err", upErr, "server_err", downErr)
}

// farewellTimeout bounds the proxy's last message to a client: one that
// does not read must not hold the session open.
const farewellTimeout = 5 * time.Second

// farewell sends the client the error that ends its session.
func (ss *session) farewell(e errorFields) {
	ss.client.SetWriteDeadline(time.Now().Add(farewellTimeout))
	writeError(ss.client, e)
}

// terminate ends the session with an error for the client, sent by the
// server-to-client side at the next message boundary.
func (ss *session) terminate(why errorFields) {
	ss.closeOnce.Do(func() {
		ss.fatal.Store(&why)
		ss.server.Close()
	})
}

// idle reports whether the session is between transactions with nothing in
// flight, so that closing it interrupts no statement.
func (ss *session) idle() bool {
	return ss.txStatus.Load() == 'I' && ss.sent.Load() == ss.answered.Load()
}

// clientFault turns a client-side relay error into the error the client gets.
func clientFault(err error) errorFields {
	var tooLarge *TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return errorFields{
			Severity: "FATAL", Code: "54000",
			Message: fmt.Sprintf("lethe-proxy: %v", tooLarge),
			Hint:    "send a smaller message, or raise postgres.max_message_size in the proxy configuration",
		}
	case errors.Is(err, ErrMalformed):
		return protocolViolation(fmt.Sprintf("lethe-proxy: %v", err))
	case errors.Is(err, errRefusedStreamed):
		return errorFields{Severity: "FATAL", Code: "XX000", Message: fmt.Sprintf("lethe-proxy: internal error: %v", err)}
	default:
		// The upstream side failed while writing; report it as lost.
		return errUpstreamLost
	}
}

func (ss *session) inspectClient(typ byte) bool {
	switch typ {
	case 'S', 'Q', 'F':
		return true // each ends in one ReadyForQuery: counted for idleness
	case 'X':
		return true // Terminate: the server will close, and that is no failure
	}
	return ss.obs != nil && isObservedClientType(typ)
}

func (ss *session) inspectServer(typ byte) bool {
	if ss.refusals.holding.Load() {
		return true // held completions must not be overtaken by any message
	}
	switch typ {
	case 'Z', 'E':
		return true
	case '1', '2', 'C', 'I', 's', 'S':
		return ss.obs != nil
	}
	return false
}

func isObservedClientType(typ byte) bool {
	switch typ {
	case 'Q', 'P', 'B', 'D', 'E', 'S', 'C', 'd', 'c', 'f':
		return true
	}
	return false
}

// fromClient sees each inspected client message before it is forwarded.
func (ss *session) fromClient(typ byte, body []byte) (verdict, error) {
	var v verdict
	if ss.obs != nil {
		if r := ss.obs.ClientMessage(Message{Type: typ, Body: body}); r != nil {
			if r.EndSession {
				ss.endSession(r)
				return verdict{drop: true}, errSessionEnded
			}
			v = ss.refuse(typ, r)
		}
	}
	switch typ {
	case 'S', 'Q', 'F':
		ss.sent.Add(1)
	case 'X':
		ss.terminated.Store(true)
	}
	return v, nil
}

// fromServer sees each inspected server message before it is forwarded.
func (ss *session) fromServer(typ byte, body []byte) (verdict, error) {
	var v verdict
	if ss.obs != nil {
		var pass bool
		if v, pass = ss.refusals.filter(typ, body, ss.answered.Load()); !pass {
			return v, nil
		}
		switch typ {
		case 'C', 'I', 's', 'Z', 'E', 'S':
			ss.obs.ServerMessage(Message{Type: typ, Body: body})
		}
	}
	if typ == 'E' && errorField(body, 'S') == "FATAL" {
		ss.serverFatal.Store(true)
	}
	if typ == 'Z' && len(body) == 1 {
		ss.txStatus.Store(uint32(body[0]))
		ss.answered.Add(1)
		ss.refusals.expire(ss.answered.Load())
	}
	return v, nil
}
