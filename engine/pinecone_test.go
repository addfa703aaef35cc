package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// A Pinecone index whose deletes stay visible: forget leaves the request
// open with the namespace unverified, and certifies it on a later resume,
// once the deletes have become visible.
func TestForget_PineconeDeleteVisibleLateIsCertifiedOnALaterResume(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	clock := time.Now()
	srv := emulator.New(emulator.Config{APIKey: "k", DeleteDelay: time.Minute, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}})
	url, err := srv.Start("127.0.0.1:0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	app := sdktest.GoIndex(t, url, "k", "docs", nil)
	_, err = app.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{
		sdktest.Vec("a1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "alice"})),
		sdktest.Vec("a2", []float32{0, 1}, sdktest.Meta(t, map[string]any{"user_id": "alice"})), // written before Lethe
		sdktest.Vec("b1", []float32{1, 1}, sdktest.Meta(t, map[string]any{"user_id": "bob"})),
	})
	require.NoError(t, err)

	ix, err := pcstore.Open(pcstore.Config{Name: "idx", Host: url, APIKey: "k", VerifyDeadline: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	layers, err := ix.Layers([]pcstore.Rule{{Namespace: "docs", Fields: []string{"user_id"}}})
	require.NoError(t, err)
	te := newTestEngine(t, time.Hour, layers...)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/docs", RecordID: "a1"})

	p, err := te.Preview(ctx, "alice")
	require.NoError(t, err)
	require.Equal(t, []LayerPreview{{Store: ledger.StorePinecone, Table: "idx/docs", LedgerRecords: 1, Rows: 2}}, p.Layers)
	id := te.forget(t, "alice")
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetReceived, st.Status, st.Error)
	require.Equal(t, []LayerStatus{{Store: "pinecone", Table: "idx/docs", Deleted: 2, Residual: 2, Unverified: true}}, st.Layers)

	mu.Lock()
	clock = clock.Add(2 * time.Minute) // the deletes become visible
	mu.Unlock()
	require.NoError(t, te.Resume(ctx))
	te.Wait()
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status, st.Error)
	require.Equal(t, []LayerStatus{{Store: "pinecone", Table: "idx/docs", Deleted: 2, Done: true}}, st.Layers)
	cert, err := te.Certificate(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "valid", te.Verify(cert).Verdict)
	env, err := certificate.Parse(cert)
	require.NoError(t, err)
	var payload certificate.Payload
	require.NoError(t, json.Unmarshal(env.Payload, &payload))
	require.Len(t, payload.Layers, 1)
	require.True(t, payload.Layers[0].VerifiedAbsent)
	require.Contains(t, payload.Layers[0].VerifyMethod, "absent at attempt 1,")
	require.Contains(t, payload.Layers[0].VerifyMethod, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")
	require.Contains(t, payload.Layers[0].VerifyQueries, "fetch namespace=docs ids=$ledger_ids (chunks of 1000)")

	res, err := app.FetchVectors(sdktest.Context(t), []string{"a1", "a2", "b1"})
	require.NoError(t, err)
	require.Equal(t, []string{"b1"}, sdktest.MapKeys(res.Vectors))
}
