package sdktest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// NodeSDKReport is the report test/integration/node/pinecone-sdk.mjs
// prints when every call of @pinecone-database/pinecone behaves as
// against Pinecone.
const NodeSDKReport = `{
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

// Node returns the node binary and the npm project (test/integration/node)
// holding module, skipping the test when either is missing unless
// LETHE_REQUIRE_NODE=1.
func Node(t testing.TB, module string) (node, dir string) {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	dir = filepath.Join(filepath.Dir(file), "..", "..", "integration", "node")
	missing := ""
	node, err := exec.LookPath("node")
	if err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", module, "package.json")); err != nil {
		missing = "test/integration/node has no " + module + " (run scripts/setup.sh)"
	}
	if missing != "" {
		if os.Getenv("LETHE_REQUIRE_NODE") == "1" {
			t.Fatalf("%s and LETHE_REQUIRE_NODE=1", missing)
		}
		t.Skipf("%s; set LETHE_REQUIRE_NODE=1 to make this a failure", missing)
	}
	return node, dir
}

// RunNode runs script from the npm project dir against the index host at
// url with apiKey and returns its stdout, failing the test if it exits
// with an error.
func RunNode(t testing.TB, node, dir string, env []string, script, url, apiKey string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script), url, apiKey)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s failed; stderr:\n%s", script, stderr.String())
	return stdout.String()
}
