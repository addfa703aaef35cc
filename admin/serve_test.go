package admin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "lethe admin test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServe_ServesTLSUntilCancelled(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveOn(ctx, Config{Engine: cannedEngine(), Tokens: testTokens(), Logger: slog.New(slog.DiscardHandler)}, ln, certFile, keyFile)
	}()

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+ln.Addr().String()+"/v1/log/checkpoint", nil)
	req.Header.Set("Authorization", "Bearer "+auditorToken)
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	client.CloseIdleConnections()

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "a cancelled server returns nil")
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestServe_RefusesAnUnusableSetup(t *testing.T) {
	certFile, _, _ := selfSigned(t)
	tests := []struct {
		name              string
		cfg               Config
		certFile, keyFile string
		want              string
	}{
		{"certificate without key", Config{Engine: cannedEngine(), Tokens: testTokens()}, certFile, "", "both a certificate file and a key file"},
		{"unreadable key", Config{Engine: cannedEngine(), Tokens: testTokens()}, certFile, filepath.Join(t.TempDir(), "missing.pem"), "loading the TLS certificate"},
		{"no tokens", Config{Engine: cannedEngine()}, "", "", "admin-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			err = serveOn(context.Background(), tt.cfg, ln, tt.certFile, tt.keyFile)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestServe_WarnsOnAPlainTextNonLoopbackAddress(t *testing.T) {
	for _, tt := range []struct {
		addr     string
		wantWarn bool
	}{
		{"127.0.0.1:0", false},
		{"[::1]:0", false},
		{"0.0.0.0:0", true},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := net.Listen("tcp", tt.addr)
			if err != nil {
				t.Skipf("cannot listen on %s here: %v", tt.addr, err)
			}
			logs := &syncBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // serve, then stop at once
			err = serveOn(ctx, Config{Engine: cannedEngine(), Tokens: testTokens(), Logger: slog.New(slog.NewTextHandler(logs, nil))}, ln, "", "")
			require.NoError(t, err)
			if tt.wantWarn {
				assert.Contains(t, logs.String(), "WITHOUT TLS")
			} else {
				assert.NotContains(t, logs.String(), "WITHOUT TLS")
			}
		})
	}
}

func TestServe_DefaultsToLoopback(t *testing.T) {
	assert.True(t, isLoopback(DefaultAddr))
	assert.True(t, isLoopback("localhost:7070"))
	assert.False(t, isLoopback(":7070"))
	assert.False(t, isLoopback("10.0.0.5:7070"))
}
