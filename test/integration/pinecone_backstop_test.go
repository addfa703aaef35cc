//go:build integration

package integration

import (
	"fmt"
	"os"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestBackstop_PineconeLateWriteAroundTheProxyIsDeleted: lethe-proxy
// with pinecone.scan_interval forgets carol, then a record about carol is
// upserted straight to the index host (around the proxy, which would
// refuse it): the backstop scan deletes it, dan's record written beside it
// stays, and carol's forget status shows the late write.
func TestBackstop_PineconeLateWriteAroundTheProxyIsDeleted(t *testing.T) {
	db := loadTestDB(t) // only for the shared forget rig's keys and tokens
	_, upstream := startEmulator(t, emulator.Config{APIKey: "backstop-key"})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, "")
	require.NoError(t, os.WriteFile(f.cfg, []byte(fmt.Sprintf(`pinecone:
  listen: %s
  scan_interval: 1s
  scan_rate: 50
  indexes:
    - name: backstop
      host: %s
      namespaces: [{namespace: "*", subjects: [user_id]}]
capture:
  ledger: {sqlite: ledger.db}
forget:
  signing_key: signing.pem
  log_origin: lethe.test/crash-log
  admin: {listen: %s, tokens_file: tokens.json}
`, pcAddr, upstream, f.admin)), 0o600))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=backstop-key")
	f.start(t)

	ctx := ctxT(t)
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "backstop-key"})
	require.NoError(t, err)
	upsert := func(host, id, subject string) {
		t.Helper()
		idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: host, Namespace: "backstop-chat"})
		require.NoError(t, err)
		defer idx.Close()
		md, err := structpb.NewStruct(map[string]any{"user_id": subject})
		require.NoError(t, err)
		values := []float32{1, 2}
		_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{{Id: id, Values: &values, Metadata: md}})
		require.NoError(t, err)
	}
	upsert("http://"+pcAddr, "m1", "carol")
	_, payload := f.forgetViaCLI(t, "carol")
	require.EqualValues(t, 1, payload.Layers[0].Deleted)

	upsert(upstream, "late1", "carol") // around the proxy
	upsert(upstream, "d1", "dan")
	direct, err := pc.Index(gopinecone.NewIndexConnParams{Host: upstream, Namespace: "backstop-chat"})
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	require.Eventually(t, func() bool {
		fetched, err := direct.FetchVectors(ctx, []string{"late1"})
		return err == nil && len(fetched.Vectors) == 0
	}, 30*time.Second, 100*time.Millisecond, "the scan deletes the late write")
	fetched, err := direct.FetchVectors(ctx, []string{"d1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"d1"}, keys(fetched.Vectors), "only the forgotten subject's records")

	var late []any
	require.Eventually(t, func() bool {
		late, _ = f.status(t, payload.RequestID)["late_writes"].([]any)
		return len(late) == 1
	}, 10*time.Second, 100*time.Millisecond, "forget status shows the late write")
	lw := late[0].(map[string]any)
	assert.Equal(t, "pinecone", lw["store"])
	assert.Equal(t, "backstop/*", lw["table"])
	assert.EqualValues(t, 1, lw["deleted"])
	assert.EqualValues(t, 0, lw["residual"])
	assert.NotNil(t, lw["log_index"], "logged as a forget.late_write of the request")
}
