package pcapture_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// upsertNotesAndTeam writes a1 (alice) and b1 (bob) to namespace notes,
// and t1 (alice) to namespace team, and waits until they are confirmed.
func upsertNotesAndTeam(t *testing.T, r *rig) {
	t.Helper()
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/upsert", upsertAliceBob).status)
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/upsert",
		`{"namespace":"team","vectors":[{"id":"t1","values":[0.5,0.6],"metadata":{"user_id":"alice"}}]}`).status)
	r.eventually(t, "alice", "docs/notes/a1 confirmed", "docs/team/t1 confirmed")
	r.eventually(t, "bob", "docs/notes/b1 confirmed")
}

// A delete of every record of a namespace that the store applied marks
// every record of that namespace deleted in the ledger, and no other
// namespace's: deleteAll (REST), delete_all (documents) and DELETE
// /namespaces/{namespace}.
func TestDeleteAll_MarksTheNamespacesRecordsDeleted(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(t *testing.T, r *rig) int
	}{
		{"vectors deleteAll", func(t *testing.T, r *rig) int {
			return post(t, http.DefaultClient, r.url, "/vectors/delete", `{"deleteAll":true,"namespace":"notes"}`).status
		}},
		{"documents delete_all", func(t *testing.T, r *rig) int {
			status, msg := postDocuments(t, http.DefaultClient, r.url, "/namespaces/notes/documents/delete", `{"delete_all":true}`)
			require.Less(t, status, 300, msg)
			return status
		}},
		{"namespace delete", func(t *testing.T, r *rig) int {
			status, msg := send(t, http.DefaultClient, http.MethodDelete, r.url+"/namespaces/notes", "", nil, nil)
			require.Less(t, status, 300, msg)
			return status
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOptions{})
			upsertNotesAndTeam(t, r)
			status := c.send(t, r)
			require.True(t, status >= 200 && status < 300, "status %d", status)
			r.eventually(t, "alice", "docs/notes/a1 deleted", "docs/team/t1 confirmed")
			r.eventually(t, "bob", "docs/notes/b1 deleted")
			assert.Empty(t, r.pending(t))
		})
	}
}

// A delete of every record that the store refused changes nothing in the
// ledger; nor does a delete by filter here, whose records only the store
// knows: the hook reports it (OnFilterDelete) and the wing settles it.
func TestDeleteAll_RefusedOrByFilterLeavesTheRecords(t *testing.T) {
	r := newRig(t, rigOptions{})
	upsertNotesAndTeam(t, r)
	for _, target := range []struct{ method, path, body string }{
		{http.MethodPost, "/vectors/delete", `{"deleteAll":true,"namespace":"notes"}`},
		{http.MethodDelete, "/namespaces/notes", ""},
	} {
		req, err := http.NewRequest(target.method, r.url+target.path, strings.NewReader(target.body))
		require.NoError(t, err)
		req.Header.Set("Api-Key", "not-the-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, target.path)
	}
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/delete",
		`{"filter":{"user_id":{"$eq":"bob"}},"namespace":"notes"}`).status)
	// A later write of the same kind, settled in order after the ones above,
	// so that the ledger has taken every earlier decision.
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/delete", `{"ids":["t1"],"namespace":"team"}`).status)
	r.eventually(t, "alice", "docs/notes/a1 confirmed", "docs/team/t1 deleted")
	r.eventually(t, "bob", "docs/notes/b1 confirmed")
}

// go-pinecone's deletes of every record of a namespace, over gRPC, that
// the store applied mark every record of that namespace deleted, and no
// other namespace's: Delete with delete_all, and DeleteNamespace.
func TestDeleteAll_GRPCMarksTheNamespacesRecordsDeleted(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(t *testing.T, r *rig) error
	}{
		{"delete_all", func(t *testing.T, r *rig) error {
			return sdktest.GoIndex(t, r.url, apiKey, "notes", nil).DeleteAllVectorsInNamespace(sdktest.Context(t))
		}},
		{"DeleteNamespace", func(t *testing.T, r *rig) error {
			return sdktest.GoIndex(t, r.url, apiKey, "notes", nil).DeleteNamespace(sdktest.Context(t), "notes")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOptions{})
			upsertNotesAndTeam(t, r)
			require.NoError(t, c.send(t, r))
			r.eventually(t, "alice", "docs/notes/a1 deleted", "docs/team/t1 confirmed")
			r.eventually(t, "bob", "docs/notes/b1 deleted")
			assert.Empty(t, r.pending(t))
		})
	}
}

// gRPC deletes of every record that the store refused change nothing in
// the ledger; a DeleteNamespace Lethe cannot read is refused and never
// reaches the store.
func TestDeleteAll_GRPCRefusedLeavesTheRecords(t *testing.T) {
	r := newRig(t, rigOptions{})
	upsertNotesAndTeam(t, r)
	wrongKey := sdktest.GoIndex(t, r.url, "not-the-key", "notes", nil)
	ctx := sdktest.Context(t)
	err := wrongKey.DeleteAllVectorsInNamespace(ctx)
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	err = wrongKey.DeleteNamespace(ctx, "notes")
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	require.Equal(t, 1, r.received.count("/VectorService/DeleteNamespace"))

	// DeleteNamespaceRequest{namespace: "notes", namespace: "team"}: a
	// parser keeps the last, so it is refused.
	msg := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "notes")
	msg = protowire.AppendString(protowire.AppendTag(msg, 1, protowire.BytesType), "team")
	code, m := grpcCall(t, h2cClient(), r.url+"/VectorService/DeleteNamespace", append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...))
	assert.Equal(t, "3", code)
	assert.Contains(t, m, "cannot read the namespace delete request")
	assert.Equal(t, 1, r.received.count("/VectorService/DeleteNamespace"))

	// A later write of the same kind, settled in order after the ones
	// above, so that the ledger has taken every earlier decision.
	require.NoError(t, sdktest.GoIndex(t, r.url, apiKey, "team", nil).DeleteVectorsById(ctx, []string{"t1"}))
	r.eventually(t, "alice", "docs/notes/a1 confirmed", "docs/team/t1 deleted")
	r.eventually(t, "bob", "docs/notes/b1 confirmed")
}
