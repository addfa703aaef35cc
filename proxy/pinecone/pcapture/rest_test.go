package pcapture_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

const (
	upsertAliceBob = `{"namespace":"notes","vectors":[
		{"id":"a1","values":[0.1,0.2],"metadata":{"user_id":"alice","text":"hello"}},
		{"id":"b1","values":[0.3,0.4],"metadata":{"user_id":"bob"}}]}`
)

// REST writes are recorded before they are forwarded and settled by the
// answer: upserts confirmed, an update that sets the subject moves the
// record, a delete by id marks it deleted.
func TestREST_WritesAreRecordedAndSettled(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient
	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/upsert", upsertAliceBob).status)
	r.eventually(t, "alice", "docs/notes/a1 confirmed")
	r.eventually(t, "bob", "docs/notes/b1 confirmed")

	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/update",
		`{"id":"a1","namespace":"notes","setMetadata":{"user_id":"bob"}}`).status)
	r.eventually(t, "alice", "docs/notes/a1 deleted")
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 confirmed")

	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/delete", `{"ids":["b1"],"namespace":"notes"}`).status)
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 deleted")

	// The Node SDK's default namespace: "" in the path, "__default__" in the ledger.
	req, err := http.NewRequest(http.MethodPost, r.url+"/records/namespaces//upsert",
		strings.NewReader(`{"_id":"r1","user_id":"carol","chunk_text":"x"}`+"\n"))
	require.NoError(t, err)
	req.Header.Set("Api-Key", apiKey)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	r.eventually(t, "carol", "docs/__default__/r1 confirmed")
	assert.Empty(t, r.pending(t))
}

// Writes capture refuses are answered in Pinecone's shape, the message
// starting with the LT code, and never reach the upstream.
func TestREST_RefusalsInPineconeShape(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient

	a := post(t, c, r.url, "/vectors/update", `{"filter":{"genre":"x"},"setMetadata":{"user_id":"bob"}}`)
	assert.Equal(t, answer{http.StatusBadRequest, 3, a.message}, a)
	assert.True(t, strings.HasPrefix(a.message, "LT001 "), a.message)
	assert.Equal(t, 0, r.received.count("/vectors/update"))

	a = post(t, c, r.url, "/bulk/imports", `{"uri":"s3://bucket/x"}`)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.True(t, strings.HasPrefix(a.message, "LT001 "), a.message)
	assert.Equal(t, 0, r.received.count("/bulk/imports"))

	r.tombs.Set(r.hasher.Hash("alice"), true)
	a = post(t, c, r.url, "/vectors/upsert", upsertAliceBob)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Equal(t, 9, a.code)
	assert.True(t, strings.HasPrefix(a.message, "LT003 "), a.message)
	assert.NotContains(t, a.message, "alice")
	assert.Equal(t, 0, r.received.count("/vectors/upsert"))
	// Deleting the forgotten subject's records stays possible.
	assert.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/delete", `{"ids":["a1"],"namespace":"notes"}`).status)

	for _, p := range []string{"/vectors//upsert", "/Vectors/Upsert", "/vectors/upsert/", "/x/../vectors/upsert", "/records/namespaces/n/upsert/"} {
		a = post(t, c, r.url, p, upsertAliceBob)
		assert.Equal(t, http.StatusBadRequest, a.status, p)
		assert.True(t, strings.HasPrefix(a.message, "LT004 "), "%s: %s", p, a.message)
	}
	assert.Empty(t, r.records(t, "bob"), "nothing refused was recorded")
	assert.Equal(t, int64(8), r.core.Stats.Refused.Load())
}

// A body capture cannot read is refused INVALID_ARGUMENT naming what is
// wrong, never a value; nothing is forwarded and the connection serves
// the next request. Malformed numbers in a vector's values, which capture
// steps over unchecked, reach the index, whose refusal drops the intent.
func TestREST_MalformedBodyIsRefusedAndConnectionStaysUsable(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for _, body := range []string{
		`{"vectors":[{"id":"a1","values":[0.1],"metadata":{"user_id":"secret-subject",}}]}`,
		`{"vectors":[{"id":7,"metadata":{"user_id":"secret-subject"}}]}`,
		`not json secret-subject`,
	} {
		a := post(t, c, r.url, "/vectors/upsert", body)
		assert.Equal(t, http.StatusBadRequest, a.status, body)
		assert.Equal(t, 3, a.code)
		assert.Contains(t, a.message, "cannot read the upsert request")
		assert.NotContains(t, a.message, "secret-subject")
	}
	assert.Equal(t, 0, r.received.count("/vectors/upsert"))
	assert.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/upsert", upsertAliceBob).status)
	r.eventually(t, "alice", "docs/notes/a1 confirmed")

	a := post(t, c, r.url, "/vectors/upsert", `{"vectors":[{"id":"x1","values":[0.1,],"metadata":{"user_id":"xavier"}}]}`)
	assert.Equal(t, http.StatusBadRequest, a.status, "the index refuses it")
	assert.Equal(t, 1+1, r.received.count("/vectors/upsert"))
	require.Eventually(t, func() bool { return len(r.pending(t)) == 0 }, 20*time.Second, 20*time.Millisecond)
	assert.Empty(t, r.records(t, "xavier"), "its intent was dropped")
}

// An upstream that refuses the write drops its intent; one that cannot be
// dialled too; the client sees the upstream's answer or UNAVAILABLE.
func TestREST_FailedWritesDropTheirIntent(t *testing.T) {
	r := newRig(t, rigOptions{})
	req, err := http.NewRequest(http.MethodPost, r.url+"/vectors/upsert", strings.NewReader(upsertAliceBob))
	require.NoError(t, err)
	req.Header.Set("Api-Key", "wrong-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Eventually(t, func() bool { return len(r.pending(t)) == 0 }, 20*time.Second, 20*time.Millisecond)
	assert.Empty(t, r.records(t, "alice"))

	down := listen(t)
	addr := down.Addr().String()
	down.Close()
	d := newRig(t, rigOptions{upstream: "http://" + addr})
	a := post(t, http.DefaultClient, d.url, "/vectors/upsert", upsertAliceBob)
	assert.Equal(t, http.StatusServiceUnavailable, a.status)
	require.Eventually(t, func() bool { return len(d.pending(t)) == 0 }, 20*time.Second, 20*time.Millisecond)
	assert.Empty(t, d.records(t, "alice"))
}

// With the ledger down the write is refused UNAVAILABLE (LT002) and not
// forwarded: capture fails closed.
func TestREST_LedgerDownFailsClosed(t *testing.T) {
	r := newRig(t, rigOptions{})
	require.NoError(t, r.ledger.Close())
	a := post(t, http.DefaultClient, r.url, "/vectors/upsert", upsertAliceBob)
	assert.Equal(t, http.StatusServiceUnavailable, a.status)
	assert.Equal(t, 14, a.code)
	assert.True(t, strings.HasPrefix(a.message, "LT002 "), a.message)
	assert.Equal(t, 0, r.received.count("/vectors/upsert"))
}

// Permissive mode forwards an update by filter that sets the subject and
// records an unattributed write of the namespace for reconcile.
func TestREST_PermissiveRecordsUnattributedWrites(t *testing.T) {
	r := newRig(t, rigOptions{mode: capture.Permissive})
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/upsert", upsertAliceBob).status)
	require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/update",
		`{"namespace":"notes","filter":{"user_id":{"$eq":"alice"}},"setMetadata":{"user_id":"dave"}}`).status)
	require.Eventually(t, func() bool {
		counts, err := r.ledger.Counts(t.Context())
		require.NoError(t, err)
		return len(counts) > 0 && len(r.pending(t)) == 0
	}, 20*time.Second, 20*time.Millisecond)
	assert.Equal(t, 1, r.received.count("/vectors/update"))
}
