package emulator_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

const testAPIKey = "test-key-0123"

// startEmulator serves cfg on a free local port until the test ends and
// returns its base URL; tlsConf nil means cleartext (h2c and HTTP/1.1).
func startEmulator(t *testing.T, cfg emulator.Config, tlsConf *tls.Config) (*emulator.Server, string) {
	t.Helper()
	srv := emulator.New(cfg)
	url, err := srv.Start("127.0.0.1:0", tlsConf)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv, url
}

// testCert is a self-signed certificate for 127.0.0.1 and localhost: the
// server's tls.Config, a pool that trusts it, and its PEM file for Node.
type testCert struct {
	server  *tls.Config
	roots   *x509.CertPool
	pemPath string
}

func newTestCert(t *testing.T) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pinecone emulator test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	pemPath := filepath.Join(t.TempDir(), "emulator-ca.pem")
	require.NoError(t, os.WriteFile(pemPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return testCert{
		server:  &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}, MinVersion: tls.VersionTLS12},
		roots:   roots,
		pemPath: pemPath,
	}
}
