//go:build integration

package integration

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// tlsProxy starts a relay that terminates client TLS with the named test
// certificate ("proxy" or "server") and reaches the server with mode.
func tlsProxy(t *testing.T, db testDB, certName string, mode pgwire.TLSMode) *proxy {
	return startProxy(t, db, func(s *pgwire.Server) {
		s.TLS = &tls.Config{Certificates: []tls.Certificate{db.cert(t, certName)}}
		s.Upstream.TLSMode = mode
		s.Upstream.TLS = &tls.Config{RootCAs: db.caPool(t), ServerName: "localhost"}
	})
}

// upstreamUsesTLS asks the server whether this session's connection is TLS.
func upstreamUsesTLS(t *testing.T, connString string) bool {
	conn := connect(t, connString)
	var ssl bool
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl))
	_, clientTLS := conn.PgConn().Conn().(*tls.Conn)
	require.True(t, clientTLS, "client side should be TLS")
	return ssl
}

func TestTLS_BothSidesWithServerCertificatePassesChannelBinding(t *testing.T) {
	db := loadTestDB(t)
	p := tlsProxy(t, db, "server", pgwire.TLSVerifyFull)
	for _, cb := range []string{"prefer", "require"} {
		t.Run(cb, func(t *testing.T) {
			url := db.URL(p.Addr, "sslmode=verify-full&sslrootcert="+db.CAFile()+"&channel_binding="+cb)
			assert.True(t, upstreamUsesTLS(t, url))
		})
	}
}

func TestTLS_PlainUpstreamServesChannelBindingPreferClients(t *testing.T) {
	db := loadTestDB(t)
	p := tlsProxy(t, db, "proxy", pgwire.TLSDisable)
	// pgx ≥ 5.9 defaults to channel_binding=prefer: it must connect.
	url := db.URL(p.Addr, "sslmode=verify-full&sslrootcert="+db.CAFile())
	assert.False(t, upstreamUsesTLS(t, url))

	// A client that requires binding is told clearly that it is not offered.
	_, err := tryConnect(t, db.URL(p.Addr, "sslmode=require&channel_binding=require"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "channel binding required")
}

func TestTLS_DifferentCertificatesAndTLSUpstreamExplainChannelBinding(t *testing.T) {
	db := loadTestDB(t)
	p := tlsProxy(t, db, "proxy", pgwire.TLSRequire)
	_, err := tryConnect(t, db.URL(p.Addr, "sslmode=require"))
	require.Error(t, err)
	assert.Equal(t, "28000", pgCode(err))
	assert.Contains(t, pgMessage(err), "SCRAM channel binding cannot cross this proxy")

	// The documented way out for such clients works.
	assert.True(t, upstreamUsesTLS(t, db.URL(p.Addr, "sslmode=require&channel_binding=disable")))
}

func TestTLS_DirectSSLNegotiation(t *testing.T) {
	db := loadTestDB(t)
	p := tlsProxy(t, db, "proxy", pgwire.TLSDisable)
	url := db.URL(p.Addr, "sslmode=require&sslnegotiation=direct")
	assert.False(t, upstreamUsesTLS(t, url))
}

func TestTLS_RequiredRefusesPlaintextClients(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, func(s *pgwire.Server) {
		s.TLS = &tls.Config{Certificates: []tls.Certificate{db.cert(t, "proxy")}}
		s.RequireTLS = true
	})
	_, err := tryConnect(t, db.URL(p.Addr, "sslmode=disable"))
	require.Error(t, err)
	assert.Equal(t, "28000", pgCode(err))
	assert.Contains(t, pgMessage(err), "requires TLS")
	assert.False(t, upstreamUsesTLS(t, db.URL(p.Addr, "sslmode=require")))
}

func TestTLS_NoCertificateAnswersSSLRequestWithN(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	// sslmode=prefer falls back to plaintext after 'N'; require fails.
	conn := connect(t, db.URL(p.Addr, "sslmode=prefer"))
	require.NoError(t, conn.Ping(ctxT(t)))
	_, err := tryConnect(t, db.URL(p.Addr, "sslmode=require"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server refused TLS connection")
}
