package pinecone_test

import (
	"crypto/tls"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// TestNodeSDK_RESTThroughRelay runs the Node SDK's data plane (upsert,
// upsertRecords in a named and the default namespace, fetch, query,
// update, list, stats, deletes, a wrong key and a bad dimension) through
// the relay, cleartext and over TLS on both sides, and gets the report it
// gets against the emulator directly.
func TestNodeSDK_RESTThroughRelay(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone")
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"cleartext", false}, {"tls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			// The SDK's upsertRecords asks the control plane (here the
			// emulator, through the relay) for the index's host and
			// uses that, so the emulator names the relay as its host.
			env := os.Environ()
			l := listen(t)
			scheme := "http://"
			var upCert, relayCert sdktest.Cert
			var upTLS, relayTLS *tls.Config
			if tc.tls {
				upCert, relayCert = sdktest.NewCert(t, "lethe-proxy pinecone relay test"), sdktest.NewCert(t, "lethe-proxy pinecone relay test")
				upTLS, relayTLS = upCert.Server, relayCert.Server
				scheme = "https://"
				env = append(env, "NODE_EXTRA_CA_CERTS="+relayCert.PEMPath)
			}
			upstream, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey, IndexName: "emulated", Host: scheme + l.Addr().String()}, upTLS)
			hook := &refusingHook{}
			relay, err := pinecone.New(pinecone.Config{Indexes: []*pinecone.Index{index(t, "emulated", upstream, upCert.Roots)}, Hook: hook})
			require.NoError(t, err)
			relayed := serveOnListener(t, relay.Server(relayTLS), l)
			assert.JSONEq(t, sdktest.NodeSDKReport, sdktest.RunNode(t, node, dir, env, "pinecone-sdk.mjs", relayed, testAPIKey))
			hook.mu.Lock()
			defer hook.mu.Unlock()
			assert.Contains(t, hook.paths, "/records/namespaces/node/upsert", "upsertRecords went through the relay")
			assert.Contains(t, hook.paths, "/records/namespaces//upsert", "the default namespace's path reached the relay as sent")
		})
	}
}
