package retention

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// A namespace holding more records than one list page, whose deletes
// become visible late: only the records whose created_at is a number of
// epoch seconds older than the retention are deleted (a string or a
// missing field is kept), in a namespace of its own and in one a "*" rule
// covers; the ledger marks them deleted and the report says each layer
// was verified absent.
func TestSweep_PineconeDeletesOnlyRecordsWithAnExpiredEpochField(t *testing.T) {
	ctx := context.Background()
	srv := emulator.New(emulator.Config{APIKey: "k", DeleteDelay: 300 * time.Millisecond})
	url, err := srv.Start("127.0.0.1:0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	now := time.Now()
	old, fresh := now.Add(-100*24*time.Hour).Unix(), now.Add(-24*time.Hour).Unix()

	var wantKept []string
	var docs []*pinecone.Vector
	for i := range 250 {
		id := fmt.Sprintf("r%03d", i)
		md := map[string]any{"user_id": "alice"}
		switch {
		case i < 130:
			md["created_at"] = old
		case i < 220:
			md["created_at"] = fresh
		case i < 235:
			md["created_at"] = "2020-01-01" // not a number: kept
		}
		if i >= 130 {
			wantKept = append(wantKept, id)
		}
		docs = append(docs, sdktest.Vec(id, []float32{1, float32(i)}, sdktest.Meta(t, md)))
	}
	app := sdktest.GoIndex(t, url, "k", "docs", nil)
	_, err = app.UpsertVectors(sdktest.Context(t), docs)
	require.NoError(t, err)
	other := sdktest.GoIndex(t, url, "k", "other", nil)
	_, err = other.UpsertVectors(sdktest.Context(t), []*pinecone.Vector{
		sdktest.Vec("o1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "bob", "created_at": old})),
		sdktest.Vec("o2", []float32{0, 1}, sdktest.Meta(t, map[string]any{"user_id": "bob", "created_at": fresh})),
	})
	require.NoError(t, err)

	ix, err := pcstore.Open(pcstore.Config{Name: "idx", Host: url, APIKey: "k", VerifyDeadline: 30 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	retainers := ix.Retainers([]pcstore.Rule{
		{Namespace: "docs", Fields: []string{"user_id"}, RetainBy: "created_at"},
		{Namespace: "*", Fields: []string{"user_id"}, RetainBy: "created_at"},
		{Namespace: "plain", Fields: []string{"user_id"}}, // no retain_by: no retainer
	})
	require.Len(t, retainers, 2)
	te := enginetest.New(t, time.Hour)
	te.Record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/docs", RecordID: "r000"},
		ledger.Entry{Store: ledger.StorePinecone, Table: "idx/docs", RecordID: "r200"})
	te.Record(t, "bob", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/other", RecordID: "o1"})
	var layers []Expiring
	for _, r := range retainers {
		layers = append(layers, Expiring{Retainer: r, Retain: 90 * 24 * time.Hour, RetainBy: "created_at"})
	}
	res, err := Sweep(ctx, Config{Layers: layers, Ledger: te.Ledger, Certifier: te.Certifier, Batch: 50})
	require.NoError(t, err)
	require.True(t, res.Clean(), "%+v", res.Layers)

	require.Len(t, res.Layers, 2)
	assert.Equal(t, "idx/docs", res.Layers[0].Table)
	assert.Equal(t, [4]int64{130, 130, 0, 30}, [4]int64{res.Layers[0].Expired, res.Layers[0].Deleted, res.Layers[0].Residual, res.Layers[0].Unreadable})
	assert.Equal(t, "idx/*", res.Layers[1].Table)
	assert.Equal(t, [4]int64{1, 1, 0, 0}, [4]int64{res.Layers[1].Expired, res.Layers[1].Deleted, res.Layers[1].Residual, res.Layers[1].Unreadable})
	assert.Contains(t, res.Layers[0].Method, "the 130 ids deleted were fetched again")
	assert.Contains(t, res.Layers[0].Method, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")

	assert.Equal(t, wantKept, listAll(t, app), "only the expired records are deleted")
	o, err := other.FetchVectors(sdktest.Context(t), []string{"o1", "o2"})
	require.NoError(t, err)
	assert.Equal(t, []string{"o2"}, sdktest.MapKeys(o.Vectors))

	for subject, want := range map[string]map[string]ledger.State{
		"alice": {"r000": ledger.StateDeleted, "r200": ledger.StateConfirmed},
		"bob":   {"o1": ledger.StateDeleted},
	} {
		recs, err := te.Ledger.BySubject(ctx, te.Hasher.Hash(subject))
		require.NoError(t, err)
		got := map[string]ledger.State{}
		for _, r := range recs {
			got[r.RecordID] = r.State
		}
		assert.Equal(t, want, got, subject)
	}
	_, err = certificate.VerifyReport(res.Report, te.Keys)
	require.NoError(t, err)
}

// listAll lists every id of the connection's namespace, page by page.
func listAll(t *testing.T, conn *pinecone.IndexConnection) []string {
	t.Helper()
	var ids []string
	var token *string
	for {
		page, err := conn.ListVectors(sdktest.Context(t), &pinecone.ListVectorsRequest{PaginationToken: token})
		require.NoError(t, err)
		ids = append(ids, sdktest.DerefAll(page.VectorIds)...)
		if page.NextPaginationToken == nil || *page.NextPaginationToken == "" {
			slices.Sort(ids)
			return ids
		}
		token = page.NextPaginationToken
	}
}
