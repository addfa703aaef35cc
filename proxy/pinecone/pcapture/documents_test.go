package pcapture_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
)

// v2026 is the API version header the Node SDK 9.x sends.
var v2026 = http.Header{"X-Pinecone-Api-Version": {"2026-07"}}

func postDocuments(t *testing.T, client *http.Client, base, path, body string) (int, string) {
	t.Helper()
	return send(t, client, http.MethodPost, base+path, "application/json", v2026, []byte(body))
}

// The API version 2026-07's documents writes are recorded before they are
// forwarded and settled by the answer: an upsert confirmed per document
// (subjects at the document's top level), an update by id that sets the
// subject moves the record, a delete by ids marks them deleted; reads pass.
func TestDocuments_WritesAreRecordedAndSettled(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient
	status, msg := postDocuments(t, c, r.url, "/namespaces/notes/documents/upsert",
		`{"documents":[{"_id":"a1","title":"x","user_id":"alice","embedding":[0.1,0.2]},{"_id":"b1","user_id":"bob"}]}`)
	require.Equal(t, http.StatusAccepted, status, msg)
	r.eventually(t, "alice", "docs/notes/a1 confirmed")
	r.eventually(t, "bob", "docs/notes/b1 confirmed")

	status, msg = postDocuments(t, c, r.url, "/namespaces/notes/documents/update", `{"documents":[{"_id":"a1","user_id":"bob"}]}`)
	require.Equal(t, http.StatusOK, status, msg)
	r.eventually(t, "alice", "docs/notes/a1 deleted")
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 confirmed")

	status, msg = postDocuments(t, c, r.url, "/namespaces/notes/documents/delete", `{"ids":["b1"]}`)
	require.Equal(t, http.StatusOK, status, msg)
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 deleted")

	// The default namespace, with no version header: read as 2026-07's.
	status, msg = send(t, c, http.MethodPost, r.url+"/namespaces/__default__/documents/upsert", "application/json", nil,
		[]byte(`{"documents":[{"_id":"d1","user_id":"carol"}]}`))
	require.Equal(t, http.StatusAccepted, status, msg)
	r.eventually(t, "carol", "docs/__default__/d1 confirmed")

	for _, p := range []string{"fetch", "list", "search"} {
		body := map[string]string{"fetch": `{"ids":["a1"]}`, "list": `{}`, "search": `{"score_by":[{"type":"text","fields":["title"],"query":"x"}],"top_k":1}`}[p]
		status, msg = postDocuments(t, c, r.url, "/namespaces/notes/documents/"+p, body)
		assert.Equal(t, http.StatusOK, status, "%s: %s", p, msg)
	}
	assert.Empty(t, r.pending(t))
}

// Documents writes capture refuses are answered in Pinecone's shape and
// never reach the index: an update by filter that sets a subject field
// (LT001 in strict mode), hostile bodies (INVALID_ARGUMENT, no value in the
// message), paths spelled differently and "//" (LT004), a documents write
// naming an API version before 2026-07 (LT004, strict).
func TestDocuments_RefusalsInPineconeShape(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient
	status, msg := postDocuments(t, c, r.url, "/namespaces/notes/documents/update",
		`{"filter":{"genre":"x"},"set_fields":{"user_id":"secret-bob"}}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, msg, `"message":"LT001 `)
	assert.NotContains(t, msg, "secret-bob")

	for name, body := range map[string]string{
		"duplicate _id":          `{"documents":[{"_id":"a","_id":"b","user_id":"secret-alice"}]}`,
		"escaped duplicate":      `{"documents":[{"_id":"a","user_id":"secret-alice","user\u005fid":"x"}]}`,
		"number beyond float64":  `{"documents":[{"_id":"a","user_id":1e400}]}`,
		"inexact number":         `{"documents":[{"_id":"a","user_id":12345678901234567890}]}`,
		"lone surrogate subject": `{"documents":[{"_id":"a","user_id":"secret-alice\ud800"}]}`,
		"not JSON":               `{"documents":[{"_id":"a","user_id":"secret-alice",}]}`,
	} {
		status, msg = postDocuments(t, c, r.url, "/namespaces/notes/documents/upsert", body)
		assert.Equal(t, http.StatusBadRequest, status, name)
		assert.Contains(t, msg, "cannot read the documents upsert request", name)
		assert.Contains(t, msg, `"code":3`, name)
		assert.NotContains(t, msg, "secret-alice", name)
	}
	for _, p := range []string{"/namespaces/notes/documents//upsert", "/namespaces/notes/Documents/Upsert", "/namespaces/notes/documents/upsert/",
		"/namespaces/notes/x/../documents/delete", "/namespaces/notes/documents/update;x", "//namespaces/notes/documents/upsert"} {
		status, msg = postDocuments(t, c, r.url, p, `{"documents":[{"_id":"a1","user_id":"alice"}]}`)
		assert.Equal(t, http.StatusBadRequest, status, p)
		assert.Contains(t, msg, `"message":"LT004 `, p)
	}
	status, msg = send(t, c, http.MethodPost, r.url+"/namespaces/notes/documents/upsert", "application/json",
		http.Header{"X-Pinecone-Api-Version": {"2025-10"}}, []byte(`{"documents":[{"_id":"a1","user_id":"alice"}]}`))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, msg, "/namespaces/*/documents/upsert (X-Pinecone-Api-Version: 2025-10)")
	for _, p := range []string{"upsert", "update", "delete"} {
		assert.Zero(t, r.received.count("/namespaces/notes/documents/"+p), p)
	}
	assert.Empty(t, r.records(t, "alice"))

	// The connection and the relay stay usable.
	status, msg = postDocuments(t, c, r.url, "/namespaces/notes/documents/upsert", `{"documents":[{"_id":"a1","user_id":"alice"}]}`)
	assert.Equal(t, http.StatusAccepted, status, msg)
	r.eventually(t, "alice", "docs/notes/a1 confirmed")
}

// In permissive mode a documents update by filter that sets a subject
// field is forwarded and recorded as one unattributed write of the
// namespace for reconcile, confirmed by the answer.
func TestDocuments_PermissiveRecordsFilterUpdateForReconcile(t *testing.T) {
	r := newRig(t, rigOptions{mode: capture.Permissive})
	status, msg := postDocuments(t, http.DefaultClient, r.url, "/namespaces/notes/documents/upsert", `{"documents":[{"_id":"a1","user_id":"alice"}]}`)
	require.Equal(t, http.StatusAccepted, status, msg)
	status, msg = postDocuments(t, http.DefaultClient, r.url, "/namespaces/notes/documents/update",
		`{"filter":{"user_id":"alice"},"set_fields":{"user_id":"bob"}}`)
	require.Equal(t, http.StatusOK, status, msg)
	require.Eventually(t, func() bool {
		counts, err := r.ledger.Counts(context.Background())
		require.NoError(t, err)
		for _, c := range counts {
			if c.Table == "docs/notes" && c.State == ledger.StateConfirmed && c.Count == 2 { // alice's a1 and the unattributed write
				return len(r.pending(t)) == 0
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "a1 and an unattributed write of docs/notes confirmed")
	assert.True(t, strings.Contains(msg, "matched_records"), msg)
}
