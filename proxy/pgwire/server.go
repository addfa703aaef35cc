package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Server accepts PostgreSQL clients and relays each one to Upstream.
// The zero value is not usable: Upstream must be set.
type Server struct {
	// Upstream is the PostgreSQL server every session is relayed to.
	Upstream *Upstream
	// TLS, when set, terminates client TLS (SSLRequest and direct SSL).
	// When nil, SSLRequest is answered 'N' and clients continue in plaintext.
	TLS *tls.Config
	// RequireTLS refuses clients that do not negotiate TLS.
	RequireTLS bool
	// MaxMessageSize bounds every client message (bytes, type byte excluded).
	// A bigger message ends that session with a clear error. 0 means no limit.
	MaxMessageSize int
	// Observer sees statements and completions; nil relays bytes only.
	Observer Observer
	// Logger receives connection-level events; never statements or rows.
	Logger *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	sessions  map[*session]struct{}
	cancels   map[string]*session // cancel key (pid + secret) → session
	conns     sync.WaitGroup
	nextID    atomic.Uint64
	closing   atomic.Bool
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// Serve accepts connections on ln until Shutdown is called or ln fails.
func (s *Server) Serve(ln net.Listener) error {
	if !s.track(ln) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.untrack(ln)
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				// Running out of descriptors is transient: back off, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logger().Warn("accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		// Counted under mu, which Shutdown takes after setting closing and
		// before it waits: a connection is either counted before Shutdown
		// waits for the count, or closed here unserved.
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			conn.Close()
			return ErrServerClosed
		}
		s.conns.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.conns.Done()
			s.serveConn(conn)
		}()
	}
}

// Shutdown stops accepting, then ends each session as soon as it is idle
// (between transactions, nothing in flight), so that no statement is cut
// off. Sessions still busy when ctx ends are closed with an admin-shutdown
// error. Shutdown returns when every connection is gone.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.mu.Lock()
	for ln := range s.listeners {
		ln.Close()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.endSessions(func(ss *session) bool { return ss.idle() })
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			s.endSessions(func(*session) bool { return true })
			<-done
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (s *Server) endSessions(which func(*session) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		if which(ss) {
			ss.terminate(errShutdown)
		}
	}
}

func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
	}
	s.listeners[ln] = struct{}{}
	return true
}

func (s *Server) untrack(ln net.Listener) {
	s.mu.Lock()
	delete(s.listeners, ln)
	s.mu.Unlock()
}

// register makes a session visible to Shutdown and to CancelRequests.
func (s *Server) register(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	if s.sessions == nil {
		s.sessions = map[*session]struct{}{}
		s.cancels = map[string]*session{}
	}
	s.sessions[ss] = struct{}{}
	if ss.cancelKey != "" {
		s.cancels[ss.cancelKey] = ss
	}
	return true
}

func (s *Server) unregister(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, ss)
	if s.cancels[ss.cancelKey] == ss {
		delete(s.cancels, ss.cancelKey)
	}
}

func (s *Server) sessionByCancelKey(key string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels[key]
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
