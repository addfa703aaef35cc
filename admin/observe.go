package admin

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
)

// requestInfo carries what the access log needs from inside the route.
type requestInfo struct {
	token string // the name of the token that authenticated the request
}

type requestInfoKey struct{}

// observe logs and counts every request by route pattern, never by URL:
// the pattern holds no ids, and a URL might hold anything a caller put
// there. Bodies are never logged.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				// The panic value may quote request data; the stack
				// says where without it.
				s.log.Error("admin: handler panicked", "route", routePattern(r), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, http.StatusInternalServerError, "internal", "internal error; the server log has the details")
				}
			}
			route := routePattern(r)
			status := rec.code()
			s.requests.inc(route, status)
			level := slog.LevelInfo
			if route == "/healthz" || route == "/readyz" {
				level = slog.LevelDebug // probes would drown the log
			}
			s.log.Log(r.Context(), level, "admin: request",
				"method", r.Method, "route", route, "status", status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000, "token", info.token)
		}()
		next.ServeHTTP(rec, r)
	})
}

// routePattern is the chi pattern that matched r, or "unmatched".
func routePattern(r *http.Request) string {
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		if p := rctx.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// code is the status answered; a handler that wrote nothing answered 200.
func (s *statusRecorder) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}
