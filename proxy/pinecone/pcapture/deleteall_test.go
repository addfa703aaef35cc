package pcapture_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
// ledger; nor does a delete by filter, whose records only the store knows.
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
