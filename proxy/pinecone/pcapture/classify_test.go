package pcapture_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
)

// send makes one request to the relay and returns its status and body
// (for gRPC, grpc-status and grpc-message from headers or trailers).
func send(t *testing.T, client *http.Client, method, url, contentType string, header http.Header, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Api-Key", apiKey)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	msg := string(b) + resp.Header.Get("Grpc-Message") + resp.Trailer.Get("Grpc-Message")
	return resp.StatusCode, msg
}

func h2cClient() *http.Client {
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &h2c}}
}

// A request-target starting with "//" names an authority to an upstream
// that resolves it as a URL: writes there are refused LT004 in every mode,
// over HTTP/1.1 and h2c, and never reach the upstream; the Node SDK's
// inner "//" (the default namespace) is still a write that is captured.
func TestAuthorityPaths_AreRefusedInEveryMode(t *testing.T) {
	for _, mode := range []capture.Mode{capture.Strict, capture.Permissive} {
		r := newRig(t, rigOptions{mode: mode})
		for name, client := range map[string]*http.Client{"http/1.1": http.DefaultClient, "h2c": h2cClient()} {
			for _, p := range []string{"//evil/vectors/upsert", "//x/records/namespaces/n/upsert", "//x/vectors/update", "//vectors/upsert", "//evil/query"} {
				status, msg := send(t, client, http.MethodPost, r.url+p, "application/json", nil, []byte(upsertAliceBob))
				assert.Equal(t, http.StatusBadRequest, status, "%s %s %s", mode, name, p)
				assert.Contains(t, msg, `"code":3`, "%s %s %s", mode, name, p)
				assert.Contains(t, msg, "LT004 ", "%s %s %s", mode, name, p)
			}
		}
		assert.Zero(t, r.received.total(), "nothing reached the upstream")
		assert.Empty(t, r.records(t, "alice"))

		status, _ := send(t, http.DefaultClient, http.MethodPost, r.url+"/records/namespaces//upsert", "application/x-ndjson", nil,
			[]byte(`{"_id":"r1","user_id":"carol","chunk_text":"x"}`+"\n"))
		assert.Equal(t, http.StatusCreated, status)
		r.eventually(t, "carol", "docs/__default__/r1 confirmed")
	}
}

// A write path carrying what some servers drop before routing (path
// parameters, trailing dots or spaces) is refused LT004 in every mode, over
// HTTP/1.1 and h2c: permissive mode would otherwise forward it unread, and
// a servlet-style or Windows-based front would write it.
func TestDecoratedWritePaths_AreRefusedInEveryMode(t *testing.T) {
	for _, mode := range []capture.Mode{capture.Strict, capture.Permissive} {
		r := newRig(t, rigOptions{mode: mode})
		for name, client := range map[string]*http.Client{"http/1.1": http.DefaultClient, "h2c": h2cClient()} {
			for _, p := range []string{"/vectors/upsert;x", "/vectors;v=1/upsert", "/vectors/upsert%3Bjsessionid=1", "/vectors/upsert.",
				"/vectors/upsert%20", "/vectors/update..", "/vectors/delete;", "/records/namespaces/n/upsert;x"} {
				status, msg := send(t, client, http.MethodPost, r.url+p, "application/json", nil, []byte(upsertAliceBob))
				assert.Equal(t, http.StatusBadRequest, status, "%s %s %s", mode, name, p)
				assert.Contains(t, msg, "LT004 ", "%s %s %s", mode, name, p)
			}
		}
		assert.Zero(t, r.received.total(), "nothing reached the upstream")
		assert.Empty(t, r.records(t, "alice"))
	}
}

// A documents upsert naming an API version before 2026-07 (which has no
// documents paths, so Lethe does not know its shape) is refused in strict
// mode (LT004, naming the path's pattern and the version, never the
// namespace) and does not reach the index; so is a known write path sent
// with an API version Lethe does not read.
func TestUnknownRequests_StrictRefusesNamingPatternAndVersion(t *testing.T) {
	r := newRig(t, rigOptions{})
	v2025 := http.Header{"X-Pinecone-Api-Version": {"2025-10"}}
	status, msg := send(t, http.DefaultClient, http.MethodPost, r.url+"/namespaces/tenant-alice/documents/upsert", "application/json", v2025,
		[]byte(`{"documents":[{"_id":"d1","user_id":"alice"}]}`))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, msg, "LT004 ")
	assert.Contains(t, msg, "/namespaces/*/documents/upsert (X-Pinecone-Api-Version: 2025-10)")
	assert.NotContains(t, msg, "tenant-alice")

	v2027 := http.Header{"X-Pinecone-Api-Version": {"2027-01"}}
	status, msg = send(t, http.DefaultClient, http.MethodPost, r.url+"/vectors/upsert", "application/json", v2027, []byte(upsertAliceBob))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, msg, "LT004 ")
	assert.Contains(t, msg, "/vectors/upsert (X-Pinecone-Api-Version: 2027-01)")

	status, msg = send(t, h2cClient(), http.MethodPost, r.url+"/VectorService/Upsert", "application/grpc", v2027, []byte{0, 0, 0, 0, 0})
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, msg, "LT004 ")

	// Unknown paths and methods, read or write alike.
	for _, tc := range []struct{ method, path string }{
		{http.MethodPut, "/vectors/fetch"},
		{http.MethodPost, "/namespaces/n/documents/patch"},
		{http.MethodPatch, "/namespaces/n"},
		{http.MethodPost, "/indexes"},
	} {
		status, msg = send(t, http.DefaultClient, tc.method, r.url+tc.path, "application/json", nil, []byte(`{}`))
		assert.Equal(t, http.StatusBadRequest, status, "%+v", tc)
		assert.Contains(t, msg, "LT004 ", "%+v", tc)
		assert.Contains(t, msg, "X-Pinecone-Api-Version: none", "%+v", tc)
	}
	status, msg = send(t, h2cClient(), http.MethodPost, r.url+"/VectorService/UpdateByMetadata", "application/grpc", nil, []byte{0, 0, 0, 0, 0})
	assert.Contains(t, msg, "LT004 ", "%d", status)
	assert.Contains(t, msg, "/VectorService/UpdateByMetadata")
	assert.Zero(t, r.received.total(), "nothing reached the upstream")

	// Known reads and the versions Lethe reads pass.
	for _, v := range []string{"2025-01", "2025-10", "2026-07"} {
		status, _ = send(t, http.DefaultClient, http.MethodPost, r.url+"/vectors/upsert", "application/json",
			http.Header{"X-Pinecone-Api-Version": {v}}, []byte(upsertAliceBob))
		assert.Equal(t, http.StatusOK, status, v)
	}
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/vectors/fetch?ids=a1&namespace=notes", ""},
		{http.MethodGet, "/vectors/list?namespace=notes", ""},
		{http.MethodPost, "/query", `{"namespace":"notes","topK":1,"vector":[0.1,0.2]}`},
		{http.MethodPost, "/describe_index_stats", `{}`},
		{http.MethodGet, "/namespaces", ""},
		{http.MethodGet, "/namespaces/notes", ""},
		{http.MethodPost, "/namespaces/notes/documents/fetch", `{"ids":["a1"]}`},
		{http.MethodPost, "/namespaces/notes/documents/list", `{}`},
		{http.MethodPost, "/namespaces/notes/documents/search", `{"score_by":[{"type":"text","fields":["text"],"query":"x"}],"top_k":1}`},
	} {
		status, msg = send(t, http.DefaultClient, tc.method, r.url+tc.path, "application/json", v2027, []byte(tc.body))
		assert.Equal(t, http.StatusOK, status, "%+v: %s", tc, msg)
	}
}

// In permissive mode an unknown request is forwarded and recorded as one
// unattributed write of the whole index, settled by the upstream's answer
// as any write (a documents path the emulator does not have: 404 drops
// it; a known write path with an unknown version is applied and confirmed).
func TestUnknownRequests_PermissiveForwardsAndRecordsUnattributed(t *testing.T) {
	r := newRig(t, rigOptions{mode: capture.Permissive})
	status, _ := send(t, http.DefaultClient, http.MethodPost, r.url+"/namespaces/n/documents/patch", "application/json",
		http.Header{"X-Pinecone-Api-Version": {"2026-07"}}, []byte(`{"documents":[{"_id":"d1","user_id":"alice"}]}`))
	assert.Equal(t, http.StatusNotFound, status, "forwarded to the emulator, which has no such path")
	assert.Equal(t, 1, r.received.count("/namespaces/n/documents/patch"))
	assert.Equal(t, int64(1), r.core.Stats.Intents.Load(), "an intent was made before forwarding")

	status, _ = send(t, http.DefaultClient, http.MethodPost, r.url+"/vectors/upsert", "application/json",
		http.Header{"X-Pinecone-Api-Version": {"2027-01"}}, []byte(upsertAliceBob))
	assert.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool {
		counts, err := r.ledger.Counts(context.Background())
		require.NoError(t, err)
		for _, c := range counts {
			if c.Table == "docs/*" && c.State == ledger.StateConfirmed && c.Count == 1 {
				return len(r.pending(t)) == 0
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "one unattributed write of docs/* confirmed, none pending")
	assert.Empty(t, r.records(t, "alice"), "the body was not read: no subject is recorded from it")
}
