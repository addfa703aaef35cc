//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// lethe-proxy serve with a pinecone section relays go-pinecone's gRPC
// calls to the index host beside the PostgreSQL listener, captures the
// upsert in the ledger, and stops cleanly on SIGTERM.
func TestBinary_RelaysPineconeAndStopsOnSIGTERM(t *testing.T) {
	bin := buildProxy(t)
	_, upstream := startEmulator(t, emulator.Config{APIKey: "binary-test-key"})

	pgAddr, pcAddr := freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: 127.0.0.1:1
pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: "*", subjects: [user_id]}]
capture:
  ledger:
    sqlite: %s
log:
  format: json
shutdown_timeout: 10s
`, pgAddr, pcAddr, upstream, filepath.Join(filepath.Dir(cfg), "ledger.db"))), 0o600))
	proxy := serveProxy(t, bin, cfg, pcAddr)
	logs := proxy.logs

	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "binary-test-key"})
	require.NoError(t, err)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: "http://" + pcAddr, Namespace: "docs"})
	require.NoError(t, err)
	defer idx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	md, err := structpb.NewStruct(map[string]any{"user_id": "u-17"})
	require.NoError(t, err)
	values := []float32{1, 2}
	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{{Id: "v1", Values: &values, Metadata: md}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	fetched, err := idx.FetchVectors(ctx, []string{"v1"})
	require.NoError(t, err)
	assert.Contains(t, fetched.Vectors, "v1")

	proxy.stop(t)
	assert.Contains(t, logs.String(), `"msg":"pinecone relay started"`)
	assert.Contains(t, logs.String(), `"msg":"stopped"`)
	assert.NotContains(t, logs.String(), "u-17", "metadata never reaches the logs")

	// The upsert was captured: the ledger holds v1 under u-17, confirmed
	// at the latest by the shutdown.
	l, err := ledger.OpenSQLite(filepath.Join(filepath.Dir(cfg), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	recs, err := l.BySubject(ctx, h.Hash("u-17"))
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, ledger.Entry{Store: ledger.StorePinecone, Table: "docs/docs", RecordID: "v1", Subject: h.Hash("u-17")}, recs[0].Entry)
	assert.Equal(t, ledger.StateConfirmed, recs[0].State)
}

// startEmulator serves a Pinecone emulator with cfg on a free loopback
// port until the test ends, and returns it and its URL.
func startEmulator(t *testing.T, cfg emulator.Config) (*emulator.Server, string) {
	t.Helper()
	em := emulator.New(cfg)
	url, err := em.Start("127.0.0.1:0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = em.Close() })
	return em, url
}
