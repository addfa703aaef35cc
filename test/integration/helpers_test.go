//go:build integration

package integration

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"errors"
	"github.com/jackc/pgx/v5"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

type (
	pgconnPgConn = pgconn.PgConn
	pgconnNotice = pgconn.Notice
)

// pgCode returns the SQLSTATE of a server (or proxy) error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgMessage returns the message of a server (or proxy) error, or "".
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return ""
}

// tryConnect connects and returns the error instead of failing the test.
func tryConnect(t testing.TB, connString string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctxT(t), connString)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

type pgwireServer = pgwire.Server

// lockedBuffer collects a child process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
