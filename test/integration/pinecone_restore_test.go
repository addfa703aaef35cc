//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestPineconeRestore_RecreatedIndexRefusesWritesUntilReplay: through
// lethe-proxy serve, an application writes alice's and bob's records and
// alice is forgotten. The index is then deleted and created again under
// its name, and a backup's records, alice's among them, are put back
// straight into it (as a restore would). The next write through the proxy
// is given an LSN behind the ones it had read: the proxy records the
// restore and refuses Pinecone writes with LT006, across a restart, until
// lethe-proxy replay ran, which deletes alice's record again, keeps bob's, and clears the
// restore; writes then pass.
func TestPineconeRestore_RecreatedIndexRefusesWritesUntilReplay(t *testing.T) {
	db := loadTestDB(t) // only for the shared forget rig's keys and tokens
	const key, ns = "pcrestore-key", "pcrestore-notes"
	em, upstream := startEmulator(t, emulator.Config{APIKey: key})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, "")
	require.NoError(t, os.WriteFile(f.cfg, []byte(fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: pcrestore
      host: %s
      namespaces: [{namespace: %s, subjects: [user_id]}]
capture:
  ledger: {sqlite: ledger.db}
  recovery_interval: 1s
forget:
  signing_key: signing.pem
  log_origin: lethe.test/crash-log
  admin: {listen: %s, tokens_file: tokens.json}
log: {format: json}
`, pcAddr, upstream, ns, f.admin)), 0o600))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY="+key)
	f.start(t)

	// upsert writes one record per (id, subject) pair, in one request.
	upsert := func(base string, pairs ...string) (int, string) {
		t.Helper()
		var vectors []string
		for i := 0; i < len(pairs); i += 2 {
			vectors = append(vectors, fmt.Sprintf(`{"id":%q,"values":[1,2],"metadata":{"user_id":%q}}`, pairs[i], pairs[i+1]))
		}
		body := fmt.Sprintf(`{"namespace":%q,"vectors":[%s]}`, ns, strings.Join(vectors, ","))
		req, err := http.NewRequest(http.MethodPost, base+"/vectors/upsert", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Api-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	held := func() (int, string) { return upsert("http://"+pcAddr, "pcrestore-probe", "pcrestore-carol") }
	fetched := func() []string {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, upstream+"/vectors/fetch?namespace="+ns+"&ids=pcrestore-a1&ids=pcrestore-b1", nil)
		require.NoError(t, err)
		req.Header.Set("Api-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var got struct {
			Vectors map[string]json.RawMessage `json:"vectors"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		return keys(got.Vectors)
	}

	// LSNs 1 and 2, then 3 for forget's own delete, which the proxy reads
	// too.
	status, body := upsert("http://"+pcAddr, "pcrestore-a1", "pcrestore-alice", "pcrestore-a2", "pcrestore-alice")
	require.Equal(t, http.StatusOK, status, body)
	status, body = upsert("http://"+pcAddr, "pcrestore-b1", "pcrestore-bob")
	require.Equal(t, http.StatusOK, status, body)
	_, payload := f.forgetViaCLI(t, "pcrestore-alice")
	require.Len(t, payload.Layers, 1)
	assert.EqualValues(t, 2, payload.Layers[0].Deleted)
	assert.Equal(t, []string{"pcrestore-b1"}, fetched())

	em.Recreate()
	// The backup's records, put back around the proxy in one request.
	status, body = upsert(upstream, "pcrestore-a1", "pcrestore-alice", "pcrestore-b1", "pcrestore-bob")
	require.Equal(t, http.StatusOK, status, body)
	assert.ElementsMatch(t, []string{"pcrestore-a1", "pcrestore-b1"}, fetched(), "alice is back")

	// LSN 2 in the new index; the proxy had read 3 (forget's delete)
	// before it sent it.
	status, body = upsert("http://"+pcAddr, "pcrestore-c1", "pcrestore-carol")
	require.Equal(t, http.StatusOK, status, "the write that shows the restore was applied already: %s", body)
	status, body = held()
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Contains(t, body, "LT006")
	assert.Contains(t, body, "lethe-proxy replay")
	f.stop(t)
	f.start(t)
	status, body = held()
	assert.Equal(t, http.StatusServiceUnavailable, status, "a restart keeps refusing until replay ran: %s", body)

	run := f.replay(t)
	require.Equal(t, 0, run.code, run.stderr)
	assert.Contains(t, run.stdout, "restore cleared")
	assert.Regexp(t, `pinecone\s+pcrestore/`+ns+`\s+found 1\s+deleted 1\s+residual 0`, run.stdout)
	assert.Equal(t, []string{"pcrestore-b1"}, fetched(), "alice is gone again, bob kept")

	require.Eventually(t, func() bool {
		status, _ := held()
		return status == http.StatusOK
	}, 30e9, 100e6, "writes pass once the proxy read that replay ran")
	logs := mustRead(t, f.cfg+".log")
	assert.Contains(t, logs, "Pinecone writes are refused (LT006) until lethe-proxy replay ran")
	assert.Contains(t, logs, "lethe-proxy replay ran; Pinecone writes are relayed again")
	for _, secret := range []string{"pcrestore-alice", "pcrestore-bob", "pcrestore-a1"} {
		assert.NotContains(t, logs, secret, "subjects and ids never reach the logs")
	}
}
