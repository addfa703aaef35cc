package pinecone_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// nodeSDKWant is the report test/integration/node/pinecone-sdk.mjs prints
// against the emulator directly (test/pinecone/emulator/sdk_node_test.go
// checks the same report there).
const nodeSDKWant = `{
  "fetchIds": ["n1", "r1", "r2"],
  "fetchN1": {"id": "n1", "values": [1, 0, 0], "metadata": {"subject": "alice", "year": 2020}},
  "fetchR2": {"id": "r2", "values": [], "metadata": {"chunk_text": "second record", "subject": "dave"}},
  "fetchDefault": ["d1"],
  "queryIds": ["n2", "n3"],
  "queryTopSubject": "bob",
  "queryTopScore": 0.9701425,
  "queryByIdValues": [0, 1, 0],
  "updatedN1": {"subject": "zoe", "year": 2020},
  "listPages": [["n1", "n2"], ["n3"], null],
  "statsBefore": {"total": 6, "dimension": 3, "namespaces": {"__default__": {"recordCount": 1}, "node": {"recordCount": 5}}},
  "afterDeletes": ["n3", "r2"],
  "statsAfter": {"total": 1, "namespaces": {"__default__": {"recordCount": 1}}},
  "wrongKey": "PineconeAuthorizationError",
  "badDimension": {"name": "PineconeBadRequestError", "dimensionMessage": true}
}`

// nodeSDK returns the node binary and the npm project holding the SDK,
// skipping the test when either is missing unless LETHE_REQUIRE_NODE=1.
func nodeSDK(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "integration", "node"))
	require.NoError(t, err)
	missing := ""
	node, err = exec.LookPath("node")
	if err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@pinecone-database", "pinecone", "package.json")); err != nil {
		missing = "test/integration/node has no @pinecone-database/pinecone (run scripts/setup.sh)"
	}
	if missing != "" {
		if os.Getenv("LETHE_REQUIRE_NODE") == "1" {
			t.Fatalf("%s and LETHE_REQUIRE_NODE=1", missing)
		}
		t.Skipf("%s; set LETHE_REQUIRE_NODE=1 to make this a failure", missing)
	}
	return node, dir
}

// TestNodeSDK_RESTThroughRelay runs the Node SDK's data plane (upsert,
// upsertRecords in a named and the default namespace, fetch, query,
// update, list, stats, deletes, a wrong key and a bad dimension) through
// the relay, cleartext and over TLS on both sides, and gets the report it
// gets against the emulator directly.
func TestNodeSDK_RESTThroughRelay(t *testing.T) {
	node, dir := nodeSDK(t)
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
			var upCert, relayCert testCert
			var upTLS, relayTLS *tls.Config
			if tc.tls {
				upCert, relayCert = newTestCert(t), newTestCert(t)
				upTLS, relayTLS = upCert.server, relayCert.server
				scheme = "https://"
				env = append(env, "NODE_EXTRA_CA_CERTS="+relayCert.pemPath)
			}
			upstream, _ := startEmulator(t, emulator.Config{APIKey: testAPIKey, IndexName: "emulated", Host: scheme + l.Addr().String()}, upTLS)
			hook := &refusingHook{}
			relay, err := pinecone.New(pinecone.Config{Indexes: []*pinecone.Index{index(t, "emulated", upstream, upCert.roots)}, Hook: hook})
			require.NoError(t, err)
			relayed := serveOnListener(t, relay.Server(relayTLS), l)
			assert.JSONEq(t, nodeSDKWant, runNode(t, node, dir, env, "pinecone-sdk.mjs", relayed))
			hook.mu.Lock()
			defer hook.mu.Unlock()
			assert.Contains(t, hook.paths, "/records/namespaces/node/upsert", "upsertRecords went through the relay")
			assert.Contains(t, hook.paths, "/records/namespaces//upsert", "the default namespace's path reached the relay as sent")
		})
	}
}

// runNode runs script from the npm project dir against url and returns its
// stdout, failing the test if it exits with an error.
func runNode(t *testing.T, node, dir string, env []string, script, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script), url, testAPIKey)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s failed; stderr:\n%s", script, stderr.String())
	return stdout.String()
}
