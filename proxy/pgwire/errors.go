package pgwire

import (
	"io"
	"syscall"

	"github.com/jackc/pgx/v5/pgproto3"
)

// errorFields is an ErrorResponse the proxy itself sends.
type errorFields = pgproto3.ErrorResponse

// clientError is a startup failure the client should be told about.
type clientError struct{ fields errorFields }

func (e *clientError) Error() string { return e.fields.Message }

var errTooManyFiles = syscall.EMFILE

// Errors the proxy reports to clients, with PostgreSQL's SQLSTATEs so that
// drivers classify them the usual way.
var (
	errShutdown = errorFields{
		Severity: "FATAL", Code: "57P01",
		Message: "lethe-proxy: terminating connection because the proxy is shutting down",
		Hint:    "reconnect; another proxy instance or this one after restart will serve you",
	}
	errUpstreamLost = errorFields{
		Severity: "FATAL", Code: "08006",
		Message: "lethe-proxy: lost the connection to the upstream PostgreSQL server",
		Hint:    "the server may have restarted; reconnect to start a new session",
	}
)

func protocolViolation(msg string) errorFields {
	return errorFields{Severity: "FATAL", Code: "08P01", Message: msg}
}

func encodeError(e errorFields) []byte {
	if e.SeverityUnlocalized == "" {
		e.SeverityUnlocalized = e.Severity
	}
	b, err := e.Encode(nil)
	if err != nil {
		panic("pgwire: encoding a proxy error: " + err.Error()) // only fixed, valid fields reach here
	}
	return b
}

func writeError(w io.Writer, e errorFields) error {
	_, err := w.Write(encodeError(e))
	return err
}
