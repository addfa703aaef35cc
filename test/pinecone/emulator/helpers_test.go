package emulator_test

import (
	"crypto/tls"
	"testing"

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
