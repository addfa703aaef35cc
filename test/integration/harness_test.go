//go:build integration

package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// testDB describes the cluster started by scripts/testdb.sh.
type testDB struct {
	Host, Port, User, Password, DB, TLSDir, Data, Bin string
}

func loadTestDB(t testing.TB) testDB {
	t.Helper()
	db := testDBFrom(os.Getenv)
	if db.Port == "" {
		t.Fatal("LETHE_TEST_PG_* is not set: run the tests with scripts/test.sh (it starts the test cluster)")
	}
	return db
}

// testDBFrom reads the LETHE_TEST_PG_* variables that scripts/testdb.sh env
// prints, through get.
func testDBFrom(get func(string) string) testDB {
	return testDB{
		Host: get("LETHE_TEST_PG_HOST"), Port: get("LETHE_TEST_PG_PORT"),
		User: get("LETHE_TEST_PG_USER"), Password: get("LETHE_TEST_PG_PASSWORD"),
		DB: get("LETHE_TEST_PG_DB"), TLSDir: get("LETHE_TEST_TLS_DIR"),
		Data: get("LETHE_TEST_PG_DATA"), Bin: get("LETHE_TEST_PG_BIN"),
	}
}

// Addr is the upstream address.
func (db testDB) Addr() string { return net.JoinHostPort(db.Host, db.Port) }

// DSN is a libpq keyword/value connection string to addr as the test superuser.
func (db testDB) DSN(addr string, extra string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s %s", host, port, db.User, db.Password, db.DB, extra)
}

// URL is the same as DSN in URL form, for clients that want one.
func (db testDB) URL(addr string, query string) string {
	u := fmt.Sprintf("postgres://%s:%s@%s/%s", db.User, db.Password, addr, db.DB)
	if query != "" {
		u += "?" + query
	}
	return u
}

func (db testDB) CAFile() string { return filepath.Join(db.TLSDir, "ca.crt") }

func (db testDB) caPool(t testing.TB) *x509.CertPool {
	pem, err := os.ReadFile(db.CAFile())
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	return pool
}

// cert loads a certificate pair from the test TLS directory ("proxy" or "server").
func (db testDB) cert(t testing.TB, name string) tls.Certificate {
	c, err := tls.LoadX509KeyPair(filepath.Join(db.TLSDir, name+".crt"), filepath.Join(db.TLSDir, name+".key"))
	require.NoError(t, err)
	return c
}

// proxy is an in-process lethe-proxy relay for one test.
type proxy struct {
	*pgwire.Server
	Addr string
}

// startProxy runs a relay to the test cluster on a loopback port; configure
// may adjust the server before it starts. The relay is shut down when the
// test ends.
func startProxy(t testing.TB, db testDB, configure func(*pgwire.Server)) *proxy {
	t.Helper()
	srv := &pgwire.Server{
		Upstream:       &pgwire.Upstream{Addr: db.Addr(), TLSMode: pgwire.TLSDisable, DialTimeout: 5 * time.Second},
		MaxMessageSize: 64 << 20,
		Logger:         slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if configure != nil {
		configure(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; !errors.Is(err, pgwire.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return &proxy{Server: srv, Addr: ln.Addr().String()}
}

// testWriter sends proxy logs to the test log, shown only on failure, and
// to suiteLogs, which TestMain scans for personal data.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	suiteLogs.Write(p)
	w.t.Logf("%s", p)
	return len(p), nil
}

// connect opens a pgx connection with a short timeout.
func connect(t testing.TB, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
