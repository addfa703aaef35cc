//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestBinary_PineconeFilterDeleteSettlesTheLedger: through lethe-proxy
// serve, go-pinecone writes two people's records over gRPC and deletes
// one person's by metadata filter; the index shows the delete late. The
// proxy settles the ledger off the request path: that person's records in
// that namespace are marked deleted, the other's and another namespace's
// stay confirmed, and the log names neither.
func TestBinary_PineconeFilterDeleteSettlesTheLedger(t *testing.T) {
	bin := buildProxy(t)
	_, upstream := startEmulator(t, emulator.Config{APIKey: "truth-key", DeleteDelay: 300 * time.Millisecond})

	dir := t.TempDir()
	pgAddr, pcAddr := freePort(t), freePort(t)
	cfg := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: 127.0.0.1:1
pinecone:
  listen: %s
  indexes:
    - name: truth
      host: %s
      namespaces: [{namespace: "*", subjects: [user_id]}]
capture:
  ledger:
    sqlite: %s
log:
  format: json
shutdown_timeout: 10s
`, pgAddr, pcAddr, upstream, filepath.Join(dir, "ledger.db"))), 0o600))
	proxy := serveProxy(t, bin, cfg, pcAddr, "LETHE_PINECONE_API_KEY=truth-key")
	logs := proxy.logs

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "truth-key"})
	require.NoError(t, err)
	index := func(ns string) *gopinecone.IndexConnection {
		idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: "http://" + pcAddr, Namespace: ns})
		require.NoError(t, err)
		t.Cleanup(func() { idx.Close() })
		return idx
	}
	notes, team := index("truth-notes"), index("truth-team")
	upsert := func(idx *gopinecone.IndexConnection, id, subject string) {
		t.Helper()
		md, err := structpb.NewStruct(map[string]any{"user_id": subject})
		require.NoError(t, err)
		values := []float32{1, 2}
		_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{{Id: id, Values: &values, Metadata: md}})
		require.NoError(t, err)
	}
	upsert(notes, "truth-a1", "truth-alice")
	upsert(notes, "truth-a2", "truth-alice")
	upsert(notes, "truth-b1", "truth-bob")
	upsert(team, "truth-t1", "truth-alice")
	filter, err := structpb.NewStruct(map[string]any{"user_id": map[string]any{"$eq": "truth-alice"}})
	require.NoError(t, err)
	require.NoError(t, notes.DeleteVectorsByFilter(ctx, (*gopinecone.MetadataFilter)(filter)))

	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"msg":"pinecone: ledger settled after a delete by filter"`)
	}, 30*time.Second, 20*time.Millisecond, "the proxy settles the ledger; logs: %s", logs)
	proxy.stop(t)
	for _, secret := range []string{"truth-alice", "truth-bob", "truth-a1", "truth-b1"} {
		assert.NotContains(t, logs.String(), secret, "subjects and ids never reach the logs")
	}
	assert.Contains(t, logs.String(), `"marked_deleted":2`)

	l, err := ledger.OpenSQLite(filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	states := func(subject string) []string {
		recs, err := l.BySubject(ctx, h.Hash(subject))
		require.NoError(t, err)
		var out []string
		for _, r := range recs {
			out = append(out, r.Table+" "+r.RecordID+" "+string(r.State))
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, []string{"truth/truth-notes truth-a1 deleted", "truth/truth-notes truth-a2 deleted", "truth/truth-team truth-t1 confirmed"}, states("truth-alice"))
	assert.Equal(t, []string{"truth/truth-notes truth-b1 confirmed"}, states("truth-bob"))
}
