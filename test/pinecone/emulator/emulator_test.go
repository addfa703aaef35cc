package emulator_test

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

func TestREST_WrongAPIKeyIs401WithPineconeErrorBody(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	for _, key := range []string{"", "wrong"} {
		resp := restJSON(t, url, http.MethodPost, "/query", key, strings.NewReader(`{"topK":1,"vector":[1]}`))
		assert.Equal(t, http.StatusUnauthorized, resp.status)
		assert.JSONEq(t, `{"code":16,"message":"Invalid API key: send the index's key in the Api-Key header","details":[]}`, resp.body)
	}
	resp := restJSON(t, url, http.MethodPost, "/vectors/upsert", testAPIKey, strings.NewReader(`{"vectors":[{"id":"a","values":[1]}]}`))
	assert.Equal(t, http.StatusOK, resp.status, resp.body)
}

func TestREST_ErrorStatuses(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{MaxRequestBytes: 1024, Dimension: 2}, nil)
	for _, tc := range []struct {
		name, method, path, body string
		status, code             int
		message                  string
	}{
		{"malformed JSON", "POST", "/vectors/upsert", `{"vectors":[`, 400, 3, "invalid JSON request body"},
		{"no vectors", "POST", "/vectors/upsert", `{"vectors":[]}`, 400, 3, "No vectors provided"},
		{"wrong dimension", "POST", "/vectors/upsert", `{"vectors":[{"id":"a","values":[1,2,3]}]}`, 400, 3, "dimension 3 does not match"},
		{"body over limit", "POST", "/vectors/upsert", `{"vectors":[{"id":"a","values":[` + strings.Repeat("1,", 600) + `1]}]}`, 413, 8, "larger than the limit of 1024 bytes"},
		{"null metadata", "POST", "/vectors/upsert", `{"vectors":[{"id":"a","values":[1,2],"metadata":{"k":null}}]}`, 400, 3, `field "k" of vector "a" is null`},
		{"nested metadata", "POST", "/vectors/upsert", `{"vectors":[{"id":"a","values":[1,2],"metadata":{"k":{"x":1}}}]}`, 400, 3, "has type object"},
		{"list of numbers", "POST", "/vectors/upsert", `{"vectors":[{"id":"a","values":[1,2],"metadata":{"k":[1]}}]}`, 400, 3, "lists may hold only strings"},
		{"nested setMetadata", "POST", "/vectors/update", `{"id":"a","setMetadata":{"k":{"x":1}}}`, 400, 3, "has type object"},
		{"record with null", "POST", "/records/namespaces/n/upsert", `{"_id":"r","k":null}`, 400, 3, "line 1 of the NDJSON body"},
		{"bad filter", "POST", "/query", `{"topK":1,"vector":[1,2],"filter":{"x":{"$regex":"a"}}}`, 400, 3, `unknown operator "$regex"`},
		{"no topK", "POST", "/query", `{"vector":[1,2]}`, 400, 3, "topK must be between"},
		{"delete nothing", "POST", "/vectors/delete", `{}`, 400, 3, "exactly one of ids, deleteAll or filter"},
		{"fetch no ids", "GET", "/vectors/fetch", ``, 400, 3, "No IDs provided"},
		{"unknown path", "GET", "/nope", ``, 404, 5, "no REST endpoint"},
		{"wrong method", "GET", "/vectors/upsert", ``, 405, 12, "not allowed"},
		{"missing namespace", "DELETE", "/namespaces/ghost", ``, 404, 5, `Namespace "ghost" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := restJSON(t, url, tc.method, tc.path, "", strings.NewReader(tc.body))
			assert.Equal(t, tc.status, resp.status, resp.body)
			var body struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Details []any  `json:"details"`
			}
			require.NoError(t, json.Unmarshal([]byte(resp.body), &body), resp.body)
			assert.Equal(t, tc.code, body.Code)
			assert.Contains(t, body.Message, tc.message)
			assert.NotNil(t, body.Details)
		})
	}
}

func TestREST_UpsertRecordsNDJSON(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	resp := restJSON(t, url, http.MethodPost, "/records/namespaces//upsert", "",
		strings.NewReader("{\"_id\":\"r1\",\"text\":\"a\"}\n\n{\"id\":\"r2\",\"n\":2}\n"))
	assert.Equal(t, http.StatusCreated, resp.status, resp.body)
	assert.Empty(t, resp.body)
	assert.NotEmpty(t, resp.header.Get("x-pinecone-request-lsn"))
	resp = restJSON(t, url, http.MethodGet, "/vectors/fetch?ids=r1&ids=r2&namespace=__default__", "", nil)
	assert.JSONEq(t, `{"namespace":"__default__","usage":{"readUnits":1},"vectors":{
		"r1":{"id":"r1","values":[],"metadata":{"text":"a"}},"r2":{"id":"r2","values":[],"metadata":{"n":2}}}}`, resp.body)

	resp = restJSON(t, url, http.MethodPost, "/records/namespaces/ns/upsert", "", strings.NewReader("{\"_id\":\"ok\"}\n{\"text\":\"no id\"}\n"))
	assert.Equal(t, http.StatusBadRequest, resp.status)
	assert.Contains(t, resp.body, `line 2 of the NDJSON body: every record must have an \"_id\" or \"id\" field`)
}

func TestREST_QueryMetrics(t *testing.T) {
	vectors := `{"vectors":[{"id":"near","values":[1,1]},{"id":"long","values":[3,0]},{"id":"far","values":[-1,-1]}]}`
	for _, tc := range []struct {
		metric string
		want   string
	}{
		// query (1,1): cosine prefers direction, dotproduct magnitude, euclidean distance.
		{emulator.MetricCosine, `[{"id":"near","score":1,"values":[]},{"id":"long","score":0.70710677,"values":[]},{"id":"far","score":-1,"values":[]}]`},
		{emulator.MetricDotProduct, `[{"id":"long","score":3,"values":[]},{"id":"near","score":2,"values":[]},{"id":"far","score":-2,"values":[]}]`},
		{emulator.MetricEuclidean, `[{"id":"near","score":0,"values":[]},{"id":"long","score":5,"values":[]},{"id":"far","score":8,"values":[]}]`},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			_, url := startEmulator(t, emulator.Config{Metric: tc.metric}, nil)
			require.Equal(t, http.StatusOK, restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(vectors)).status)
			resp := restJSON(t, url, "POST", "/query", "", strings.NewReader(`{"topK":3,"vector":[1,1]}`))
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			var out struct{ Matches json.RawMessage }
			require.NoError(t, json.Unmarshal([]byte(resp.body), &out))
			assert.JSONEq(t, tc.want, string(out.Matches))
		})
	}
}

// fakeClock is a settable clock for Config.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func lsnOf(t *testing.T, r restResponse, header string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(r.header.Get(header), 10, 64)
	require.NoError(t, err, "header %s missing or not a number in %v", header, r.header)
	return n
}

// A delete stays invisible to readers for DeleteDelay, and the max indexed
// LSN stays below the delete's LSN until it is visible: what a verifier of
// absence must wait for.
func TestDeleteDelay_DeletedRecordsStayVisibleUntilIndexed(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, url := startEmulator(t, emulator.Config{DeleteDelay: 10 * time.Second, Now: clock.Now}, nil)
	up := restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(`{"namespace":"n","vectors":[{"id":"gone","values":[1,0]},{"id":"kept","values":[0,1]}]}`))
	require.Equal(t, http.StatusOK, up.status, up.body)
	upLSN := lsnOf(t, up, "x-pinecone-request-lsn")

	del := restJSON(t, url, "POST", "/vectors/delete", "", strings.NewReader(`{"namespace":"n","ids":["gone"]}`))
	require.Equal(t, http.StatusOK, del.status, del.body)
	delLSN := lsnOf(t, del, "x-pinecone-request-lsn")
	require.Greater(t, delLSN, upLSN)

	reads := func() (fetch, list, query, stats restResponse) {
		fetch = restJSON(t, url, "GET", "/vectors/fetch?namespace=n&ids=gone", "", nil)
		list = restJSON(t, url, "GET", "/vectors/list?namespace=n", "", nil)
		query = restJSON(t, url, "POST", "/query", "", strings.NewReader(`{"namespace":"n","topK":5,"vector":[1,0]}`))
		stats = restJSON(t, url, "POST", "/describe_index_stats", "", strings.NewReader(`{}`))
		return
	}
	clock.Advance(9 * time.Second)
	fetch, list, query, stats := reads()
	assert.Contains(t, fetch.body, `"gone"`)
	assert.Contains(t, list.body, `"gone"`)
	assert.Contains(t, query.body, `"gone"`)
	assert.Contains(t, stats.body, `"vectorCount":2`)
	for _, r := range []restResponse{fetch, list, query, stats} {
		assert.Less(t, lsnOf(t, r, "x-pinecone-max-indexed-lsn"), delLSN)
	}

	clock.Advance(time.Second)
	fetch, list, query, stats = reads()
	assert.NotContains(t, fetch.body, `"gone"`)
	assert.NotContains(t, list.body, `"gone"`)
	assert.NotContains(t, query.body, `"gone"`)
	assert.Contains(t, stats.body, `"vectorCount":1`)
	assert.Contains(t, list.body, `"kept"`)
	for _, r := range []restResponse{fetch, list, query, stats} {
		assert.GreaterOrEqual(t, lsnOf(t, r, "x-pinecone-max-indexed-lsn"), delLSN)
	}
}

func TestDeleteDelay_UpsertAfterDeleteWins(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, url := startEmulator(t, emulator.Config{DeleteDelay: time.Minute, Now: clock.Now}, nil)
	upsert := `{"vectors":[{"id":"a","values":[1]}]}`
	require.Equal(t, 200, restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(upsert)).status)
	require.Equal(t, 200, restJSON(t, url, "POST", "/vectors/delete", "", strings.NewReader(`{"deleteAll":true}`)).status)
	require.Equal(t, 200, restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(upsert)).status)
	clock.Advance(2 * time.Minute)
	assert.Contains(t, restJSON(t, url, "GET", "/vectors/fetch?ids=a", "", nil).body, `"a"`)
}

func TestREST_LSNHeaders(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	first := lsnOf(t, restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(`{"vectors":[{"id":"a","values":[1]}]}`)), "x-pinecone-request-lsn")
	second := lsnOf(t, restJSON(t, url, "POST", "/vectors/update", "", strings.NewReader(`{"id":"a","setMetadata":{"k":"v"}}`)), "x-pinecone-request-lsn")
	assert.Greater(t, second, first)
	fetch := restJSON(t, url, "GET", "/vectors/fetch?ids=a", "", nil)
	assert.Equal(t, second, lsnOf(t, fetch, "x-pinecone-max-indexed-lsn"))
	assert.Empty(t, fetch.header.Get("x-pinecone-request-lsn"))
}

// grpcCall makes one raw gRPC call over cleartext HTTP/2 (prior knowledge)
// and returns the response message and the grpc-status and grpc-message.
func grpcCall(t *testing.T, base, method string, frame []byte) (msg []byte, status, message string) {
	t.Helper()
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	req, err := http.NewRequest(http.MethodPost, base+"/VectorService/"+method, bytes.NewReader(frame))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	status, message = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	if status == "" {
		status, message = resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	}
	if len(body) >= 5 {
		msg = body[5:]
	}
	return msg, status, message
}

func grpcFrame(msg []byte) []byte {
	frame := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	return append(frame, msg...)
}

func TestGRPC_RefusalsCarryStatus(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{MaxRequestBytes: 64}, nil)
	for _, tc := range []struct {
		name, method string
		frame        []byte
		status       string
		message      string
	}{
		{"truncated protobuf", "Upsert", grpcFrame([]byte{0x0a, 0x05, 0x0a}), "3", "invalid protobuf"},
		{"wrong wire type", "Fetch", grpcFrame([]byte{0x10, 0x01}), "3", "field 2 has wire type 0, want 2"},
		{"invalid UTF-8 id", "Fetch", grpcFrame([]byte{0x0a, 0x01, 0xff}), "3", "not valid UTF-8"},
		{"compressed", "Fetch", []byte{1, 0, 0, 0, 0}, "12", "compressed"},
		{"over limit", "Upsert", grpcFrame(make([]byte, 65)), "8", "larger than the limit of 64 bytes"},
		{"no message", "Fetch", nil, "3", "no complete message"},
		{"unknown method", "Frobnicate", grpcFrame(nil), "12", "unknown method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, status, message := grpcCall(t, url, tc.method, tc.frame)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, message, tc.message)
		})
	}
}

func TestREST_MetadataOver40KBIsRefused(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	big := strings.Repeat("x", 41<<10)
	resp := restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(`{"vectors":[{"id":"a","values":[1],"metadata":{"k":"`+big+`"}}]}`))
	assert.Equal(t, http.StatusBadRequest, resp.status)
	assert.Contains(t, resp.body, "more than the limit of 40960 bytes per vector")
	small := restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(`{"vectors":[{"id":"a","values":[1],"metadata":{"k":"`+big[:39<<10]+`"}}]}`))
	assert.Equal(t, http.StatusOK, small.status, small.body)
}

func TestREST_Namespaces(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	for _, ns := range []string{"a", "b", ""} {
		body := `{"namespace":"` + ns + `","vectors":[{"id":"x","values":[1]},{"id":"y","values":[2]}]}`
		require.Equal(t, http.StatusOK, restJSON(t, url, "POST", "/vectors/upsert", "", strings.NewReader(body)).status)
	}
	list := restJSON(t, url, "GET", "/namespaces?limit=2", "", nil)
	require.Equal(t, http.StatusOK, list.status, list.body)
	assert.JSONEq(t, `{"namespaces":[{"name":"__default__","recordCount":2},{"name":"a","recordCount":2}],"pagination":{"next":"YQ"},"totalCount":3}`, list.body)
	list = restJSON(t, url, "GET", "/namespaces?limit=2&paginationToken=YQ", "", nil)
	assert.JSONEq(t, `{"namespaces":[{"name":"b","recordCount":2}],"totalCount":3}`, list.body)

	del := restJSON(t, url, "DELETE", "/namespaces/a", "", nil)
	assert.Equal(t, http.StatusAccepted, del.status, del.body)
	assert.NotEmpty(t, del.header.Get("x-pinecone-request-lsn"))
	assert.Equal(t, http.StatusNotFound, restJSON(t, url, "GET", "/namespaces/a", "", nil).status)
	assert.JSONEq(t, `{"name":"b","recordCount":2}`, restJSON(t, url, "GET", "/namespaces/b", "", nil).body)
}

// REST also works over HTTP/2: with TLS through ALPN h2, and in cleartext
// with prior knowledge, as a relay in front of the emulator may speak it.
func TestREST_OverHTTP2(t *testing.T) {
	cert := sdktest.NewCert(t, "pinecone emulator test")
	_, tlsURL := startEmulator(t, emulator.Config{}, cert.Server)
	_, clearURL := startEmulator(t, emulator.Config{}, nil)
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	for name, tc := range map[string]struct {
		url       string
		transport *http.Transport
	}{
		"tls":       {tlsURL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Roots}, ForceAttemptHTTP2: true}},
		"cleartext": {clearURL, &http.Transport{Protocols: &h2c}},
	} {
		t.Run(name, func(t *testing.T) {
			client := &http.Client{Transport: tc.transport}
			resp, err := client.Post(tc.url+"/vectors/upsert", "application/json", strings.NewReader(`{"vectors":[{"id":"a","values":[1]}]}`))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, 2, resp.ProtoMajor)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.JSONEq(t, `{"upsertedCount":1}`, string(body))
		})
	}
}
