//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// controlPlaneCalls records what reaches the control plane: method, path
// and X-Pinecone-Api-Version of each request, in order.
type controlPlaneCalls struct {
	mu    sync.Mutex
	calls []string
}

func (c *controlPlaneCalls) add(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("%s %s (X-Pinecone-Api-Version %s)", r.Method, r.URL.Path, r.Header.Get("X-Pinecone-Api-Version")))
}

func (c *controlPlaneCalls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

// TestControlPlane_SDKsGivenOnlyTheControlPlaneWriteThroughTheProxy: the
// Node SDK 5.x and 9.x, given only an API key and lethe-proxy's control
// plane as controllerHostUrl, and go-pinecone v5 given it as its Host,
// look the index's host up there and are answered the proxy's data-plane
// address, so every write passes the relay and the ledger holds it: 5.x's
// vector upsert and upsertRecords, 9.x's vector upsert, upsertRecords,
// update, deleteMany, index.documents.upsert and update (one host lookup
// for all of them), go-pinecone's gRPC UpsertVectors. The emulator
// stands in for both of Pinecone's planes; it answers describe index with
// its own address, the host an SDK would use without the rewrite.
func TestControlPlane_SDKsGivenOnlyTheControlPlaneWriteThroughTheProxy(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone9")
	sdktest.Node(t, "@pinecone-database/pinecone")
	bin := buildProxy(t)
	const key, index = "ctrl-key", "ctrl-docs"
	_, upstream := startEmulator(t, emulator.Config{APIKey: key, IndexName: index, Dimension: 3})

	// The control plane upstream is the emulator behind a recorder.
	var calls controlPlaneCalls
	emURL, err := url.Parse(upstream)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(emURL)
	recorder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.add(r)
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(recorder.Close)

	pcAddr, cpAddr, pgAddr := freePort(t), freePort(t), freePort(t)
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: 127.0.0.1:1
pinecone:
  listen: %s
  control_plane:
    listen: %s
    upstream: %s
  indexes:
    - name: %s
      host: %s
      namespaces: [{namespace: notes, subjects: [user_id]}]
capture:
  ledger:
    sqlite: %s
log:
  format: json
  level: debug
shutdown_timeout: 10s
`, pgAddr, pcAddr, cpAddr, recorder.URL, index, upstream, filepath.Join(tmp, "ledger.db"))), 0o600))
	proxy := serveProxy(t, bin, cfg, cpAddr)
	logs := proxy.logs
	controlPlane, proxied := "http://"+cpAddr, "http://"+pcAddr

	run := func(sdk string) map[string]any {
		t.Helper()
		env := append(os.Environ(), "LETHE_CTRL_SDK="+sdk, "LETHE_CTRL_INDEX="+index)
		out := sdktest.RunNode(t, node, dir, env, "pinecone-controlplane.mjs", controlPlane, key)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		return got
	}
	five := run("5")
	assert.Equal(t, proxied, five["describedHost"])
	assert.Equal(t, []any{[]any{index, proxied}}, five["listedHosts"])
	fiveCalls := calls.take()
	nine := run("9")
	assert.EqualValues(t, 1, nine["upserted"])
	assert.EqualValues(t, 1, nine["updated"])
	nineCalls := calls.take()

	ctx := ctxT(t)
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: key, Host: controlPlane})
	require.NoError(t, err)
	described, err := pc.DescribeIndex(ctx, index)
	require.NoError(t, err)
	assert.Equal(t, proxied, described.Host)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: described.Host, Namespace: "notes"})
	require.NoError(t, err)
	defer idx.Close()
	md, err := structpb.NewStruct(map[string]any{"user_id": "dave"})
	require.NoError(t, err)
	_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("vgo-dave", []float32{0, 0, 1}, md)})
	require.NoError(t, err)
	goCalls := calls.take()

	t.Logf("Node SDK 5.1.2 sent the control plane: %q", fiveCalls)
	t.Logf("Node SDK 9.0.0 sent the control plane: %q", nineCalls)
	t.Logf("go-pinecone v5.2.0 sent the control plane: %q", goCalls)
	// 5.x looks the host up once for both writes (then the script's own
	// describe and list); 9.x once for its vectors, records and documents; the Go
	// application's DescribeIndex is the only call go-pinecone makes.
	describe := "GET /indexes/" + index
	assert.Equal(t, []string{describe + " (X-Pinecone-Api-Version 2025-01)", describe + " (X-Pinecone-Api-Version 2025-01)",
		"GET /indexes (X-Pinecone-Api-Version 2025-01)"}, fiveCalls)
	assert.Equal(t, []string{describe + " (X-Pinecone-Api-Version 2026-07)"}, nineCalls)
	assert.Equal(t, []string{describe + " (X-Pinecone-Api-Version 2025-10)"}, goCalls)

	proxy.stop(t)
	assert.Contains(t, logs.String(), `"msg":"pinecone control plane relay started"`)
	assert.NotContains(t, logs.String(), key, "the API key is never logged")

	l, err := ledger.OpenSQLite(filepath.Join(tmp, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	for subject, want := range map[string][]string{
		"alice": {"v5-alice", "v9-alice"}, "bob": {"r5-bob"}, "carol": {"d9-carol"}, "dave": {"vgo-dave"}, "erin": {"r9-erin"},
	} {
		recs, err := l.BySubject(ctx, h.Hash(subject))
		require.NoError(t, err)
		var ids []string
		for _, r := range recs {
			assert.Equal(t, index+"/notes", r.Entry.Table)
			assert.Equal(t, ledger.StateConfirmed, r.State)
			ids = append(ids, r.Entry.RecordID)
		}
		assert.ElementsMatch(t, want, ids, "%s's writes passed the proxy", subject)
	}
}
