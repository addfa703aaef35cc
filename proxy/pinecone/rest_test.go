package pinecone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

type restResponse struct {
	status int
	header http.Header
	body   string
}

// restCall sends one REST request with the test Api-Key through client.
func restCall(t *testing.T, client *http.Client, method, url, host, body string) restResponse {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Api-Key", testAPIKey)
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return restResponse{resp.StatusCode, resp.Header, string(b)}
}

// pineconeError decodes Pinecone's REST error shape, requiring exactly its
// three fields.
func pineconeError(t *testing.T, body string) (code int, message string) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details []any  `json:"details"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), body)
	require.NotNil(t, e.Details, "details is [] as Pinecone sends it: %s", body)
	return e.Code, e.Message
}

func TestREST_UpstreamDownIs503Unavailable(t *testing.T) {
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", "http://"+freeAddr(t), nil)}}, nil)
	resp := restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}]}`)
	assert.Equal(t, http.StatusServiceUnavailable, resp.status)
	assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
	code, msg := pineconeError(t, resp.body)
	assert.Equal(t, 14, code)
	assert.Contains(t, msg, "lethe-proxy: cannot reach the Pinecone index host")
}

// countingClient is an HTTP/1.1 client that counts the connections it
// opens, to show a connection survived a refusal.
func countingClient() (*http.Client, *atomic.Int32) {
	var dials atomic.Int32
	dialer := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dialer.DialContext(ctx, network, addr)
		},
	}}, &dials
}

// An oversized REST body is answered 413 RESOURCE_EXHAUSTED before
// anything reaches the upstream, with and without Content-Length, and
// the client's next request travels on the same connection.
func TestREST_OversizedIs413AndConnectionStaysUsable(t *testing.T) {
	upstream, rec := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}, MaxRequestBytes: 64 << 10}, nil)
	client, dials := countingClient()
	big := `{"vectors":[{"id":"a","values":[1]}],"pad":"` + strings.Repeat("x", 256<<10) + `"}`

	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body) // hides the length: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, relayed+"/vectors/upsert", body)
		require.NoError(t, err)
		req.Header.Set("Api-Key", testAPIKey)
		resp, err := client.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "chunked=%v", chunked)
		code, msg := pineconeError(t, string(b))
		assert.Equal(t, 8, code)
		assert.Contains(t, msg, "larger than 65536 bytes")
	}
	assert.Empty(t, rec.all(), "no oversized request reaches the upstream whole")

	resp := restCall(t, client, http.MethodPost, relayed+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}],"namespace":"n"}`)
	assert.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.JSONEq(t, `{"upsertedCount":1}`, resp.body)
	assert.EqualValues(t, 1, dials.Load(), "every request used the first connection")
}

// The Node SDK's path for the default namespace, with an empty segment,
// reaches the upstream as sent: no cleaning, no redirect.
func TestREST_DefaultNamespacePathIsNotCleaned(t *testing.T) {
	relayed, rec := relayTo(t, emulator.Config{APIKey: testAPIKey})
	resp := restCall(t, http.DefaultClient, http.MethodPost, relayed+"/records/namespaces//upsert", "",
		`{"_id":"d1","chunk_text":"default","subject":"erin"}`+"\n")
	assert.Equal(t, http.StatusCreated, resp.status, resp.body)
	reqs := rec.all()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/records/namespaces//upsert", reqs[0].URL.Path)

	resp = restCall(t, http.DefaultClient, http.MethodGet, relayed+"/vectors/fetch?ids=d1&namespace=__default__", "", "")
	assert.Equal(t, http.StatusOK, resp.status)
	assert.Contains(t, resp.body, `"d1"`)
}

// Headers reach the upstream as the client sent them; the upstream's
// response headers (its LSN among them) reach the client.
func TestREST_HeadersPassThrough(t *testing.T) {
	relayed, rec := relayTo(t, emulator.Config{APIKey: testAPIKey})
	req, err := http.NewRequest(http.MethodPost, relayed+"/vectors/upsert", strings.NewReader(`{"vectors":[{"id":"a","values":[1]}]}`))
	require.NoError(t, err)
	req.Header.Set("Api-Key", testAPIKey)
	req.Header.Set("X-Pinecone-Api-Version", "2025-04")
	req.Header.Set("User-Agent", "lethe-test/1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("X-Pinecone-Request-Lsn"))

	reqs := rec.all()
	require.Len(t, reqs, 1)
	got := reqs[0].Header
	assert.Equal(t, testAPIKey, got.Get("Api-Key"))
	assert.Equal(t, "2025-04", got.Get("X-Pinecone-Api-Version"))
	assert.Equal(t, "lethe-test/1", got.Get("User-Agent"))
	assert.Empty(t, got.Values("X-Forwarded-For"))
	assert.Empty(t, got.Values("Forwarded"))
}

// With several indexes a request's host names its index; an unknown host
// is NOT_FOUND naming the configured indexes.
func TestREST_SeveralIndexesRouteByHost(t *testing.T) {
	upA, recA := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	upB, recB := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "alpha", upA, nil), index(t, "beta", upB, nil)}}, nil)
	upsert := `{"vectors":[{"id":"a","values":[1]}]}`

	assert.Equal(t, http.StatusOK, restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "beta.lethe.internal:5081", upsert).status)
	assert.Equal(t, http.StatusOK, restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "ALPHA", upsert).status)
	assert.Len(t, recA.all(), 1)
	assert.Len(t, recB.all(), 1)

	resp := restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "gamma.lethe.internal", upsert)
	assert.Equal(t, http.StatusNotFound, resp.status)
	code, msg := pineconeError(t, resp.body)
	assert.Equal(t, 5, code)
	assert.Contains(t, msg, `no index is configured for host "gamma.lethe.internal"`)
	assert.Contains(t, msg, "alpha, beta")
	assert.Len(t, recA.all(), 1)
	assert.Len(t, recB.all(), 1)
}

// refusingHook refuses every request whose body mentions "forbidden" and
// records what it saw.
type refusingHook struct {
	mu        sync.Mutex
	paths     []string
	bodies    []string
	responses []int
	failures  []error
}

func (h *refusingHook) Request(ix *pinecone.Index, r *http.Request, body []byte) (pinecone.Call, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paths = append(h.paths, r.URL.Path)
	h.bodies = append(h.bodies, string(body))
	if bytes.Contains(body, []byte("forbidden")) {
		return nil, &pinecone.Status{Code: pinecone.CodeFailedPrecondition, Message: "refused by the hook"}
	}
	return h, nil
}

func (h *refusingHook) Response(resp *http.Response) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.responses = append(h.responses, resp.StatusCode)
	return nil
}

func (h *refusingHook) Unreachable(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = append(h.failures, err)
}

// A Hook sees each whole body before its tail is forwarded, and each
// response; its refusal is answered in Pinecone's shape and the request
// never reaches the upstream whole.
func TestHook_SeesRequestsAndRefuses(t *testing.T) {
	upstream, rec := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	hook := &refusingHook{}
	relayed := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}, Hook: hook}, nil)

	ok := `{"vectors":[{"id":"a","values":[1]}]}`
	assert.Equal(t, http.StatusOK, restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "", ok).status)
	resp := restCall(t, http.DefaultClient, http.MethodPost, relayed+"/vectors/upsert", "", `{"vectors":[{"id":"forbidden","values":[1]}]}`)
	assert.Equal(t, http.StatusBadRequest, resp.status)
	code, msg := pineconeError(t, resp.body)
	assert.Equal(t, 9, code)
	assert.Equal(t, "refused by the hook", msg)

	assert.Equal(t, []string{ok, `{"vectors":[{"id":"forbidden","values":[1]}]}`}, hook.bodies)
	assert.Equal(t, []int{http.StatusOK}, hook.responses)
	assert.Len(t, rec.all(), 1, "the refused request did not reach the upstream whole")

	// An upstream that is down: the dial may fail before the whole body
	// has arrived, and then the Hook is never asked (the exchange ends
	// with nothing to settle); a Hook that was asked learns of the failure.
	down := &refusingHook{}
	relayedDown := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", "http://"+freeAddr(t), nil)}, Hook: down}, nil)
	assert.Equal(t, http.StatusServiceUnavailable, restCall(t, http.DefaultClient, http.MethodPost, relayedDown+"/vectors/upsert", "", ok).status)
	down.mu.Lock()
	asked, failures := len(down.bodies), down.failures
	down.mu.Unlock()
	require.Len(t, failures, asked)
	var opErr *net.OpError
	for _, err := range failures {
		assert.True(t, errors.As(err, &opErr), "%v", err)
	}

	// An upstream that takes the whole body and breaks the connection
	// without answering: its tail went only once the Hook had accepted,
	// so the Hook is always told.
	broken := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}), nil)
	cut := &refusingHook{}
	relayedCut := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", broken, nil)}, Hook: cut}, nil)
	assert.Equal(t, http.StatusServiceUnavailable, restCall(t, http.DefaultClient, http.MethodPost, relayedCut+"/vectors/upsert", "", ok).status)
	cut.mu.Lock()
	defer cut.mu.Unlock()
	assert.Equal(t, []string{ok}, cut.bodies)
	assert.Len(t, cut.failures, 1, "the Hook that accepted learns that no answer came")
}
