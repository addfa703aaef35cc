//go:build integration

package integration

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// sdkRequest is one request an index host received, as docs/pinecone.md's
// "What the SDKs send" reports it.
type sdkRequest struct {
	Method, Path, APIVersion, UserAgent, ContentType string
	Body                                             string // REST: the first 400 bytes; gRPC: its length
}

func (r sdkRequest) String() string {
	return fmt.Sprintf("%s %s | api %q | ua %q | %s | %s", r.Method, r.Path, r.APIVersion, r.UserAgent, r.ContentType, r.Body)
}

// sdkRequests records what reaches an index host, in order.
type sdkRequests struct {
	mu   sync.Mutex
	list []sdkRequest
}

func (s *sdkRequests) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := sdkRequest{Method: r.Method, Path: r.URL.RequestURI(), APIVersion: r.Header.Get("X-Pinecone-Api-Version"),
			UserAgent: r.Header.Get("User-Agent"), ContentType: r.Header.Get("Content-Type")}
		if strings.HasPrefix(rec.ContentType, "application/grpc") {
			rec.Body = grpcFields(body)
		} else {
			rec.Body = fmt.Sprintf("%q", body[:min(len(body), 400)])
		}
		s.mu.Lock()
		s.list = append(s.list, rec)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// grpcFields shows a unary gRPC request's message as its top-level
// fields: number, wire type and, for a string, its value (ids and
// namespaces; metadata is a nested message and shows as bytes).
func grpcFields(frame []byte) string {
	if len(frame) < 5 {
		return "no message"
	}
	msg, out := frame[5:], []string{}
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return "unreadable"
		}
		msg = msg[n:]
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return "unreadable"
		}
		field := fmt.Sprintf("%d", num)
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(msg)
			if utf8.Valid(v) && !bytes.ContainsFunc(v, func(r rune) bool { return r < ' ' }) {
				field += fmt.Sprintf("=%q", v)
			} else {
				field += fmt.Sprintf(":%d bytes", len(v))
			}
		} else {
			field += fmt.Sprintf(":wire type %d", typ)
		}
		out = append(out, field)
		msg = msg[m:]
	}
	return "protobuf {" + strings.Join(out, " ") + "}"
}

// take returns the requests recorded since the last take.
func (s *sdkRequests) take() []sdkRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.list
	s.list = nil
	return out
}

// startRecordedEmulator serves an emulator of cfg in cleartext (HTTP/1.1
// and h2c, as Emulator.Start does) behind rec, until the test ends.
func startRecordedEmulator(t *testing.T, cfg emulator.Config, rec *sdkRequests) string {
	t.Helper()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: rec.wrap(emulator.New(cfg).Handler()), Protocols: &protocols, ReadHeaderTimeout: 30 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestSDKMatrix_EveryAPIThroughTheProxyThenOneForget: the Pinecone
// clients as applications use them, each given the proxy's address as its
// index host and nothing else changed, write, update, delete and read
// through one lethe-proxy serving TLS in front of two indexes: a vectors
// index (the Node SDK 9.x's vectors and records APIs, LangChain.js
// PineconeStore on the SDK 5.x, go-pinecone v5 over gRPC and over REST,
// one namespace each, and the default namespace from both SDKs) and a
// document index (the Node SDK 9.x's documents API), in strict mode.
// Updates include ones that move a record from bob to alice. One forget
// of alice then gives one certificate, which verifies, with a layer per
// namespace; reading the indexes directly finds none of alice's records
// and all of bob's, every client still finds bob's, and alice's next
// writes are refused.
//
// The proxy routes by host name (several indexes; proxy/pinecone), and
// these machines resolve no name but localhost and 127.0.0.1: so the
// vectors index is named "127" (reached at https://127.0.0.1:port) and the
// document index "localhost" (https://localhost:port).
//
// Every request the indexes receive is logged (t.Logf) for
// docs/pinecone.md's "What the SDKs send", and the parts that section
// states are asserted.
func TestSDKMatrix_EveryAPIThroughTheProxyThenOneForget(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone9")
	sdktest.Node(t, "@langchain/pinecone")
	db := loadTestDB(t) // only for the shared forget rig's keys and tokens
	const key = "sdkm-key"
	var vectorsSeen, docsSeen sdkRequests
	// Deletes are visible at once, so that each client's read after its
	// delete is exact; forget against deletes made visible late is
	// TestForget_AcrossPostgresAndPinecone's and
	// TestForget_DocumentIndexAndPostgres's.
	vectorsUpstream := startRecordedEmulator(t, emulator.Config{APIKey: key, IndexName: "127"}, &vectorsSeen)
	docsUpstream := startRecordedEmulator(t, emulator.Config{APIKey: key, IndexName: "localhost"}, &docsSeen)
	cert := sdktest.NewCert(t, "lethe-proxy sdk matrix")

	pcAddr := freePort(t)
	_, port, err := net.SplitHostPort(pcAddr)
	require.NoError(t, err)
	f := newForgetBinary(t, db, "")
	require.NoError(t, os.WriteFile(f.cfg, []byte(fmt.Sprintf(`pinecone:
  listen: %s
  tls: {cert_file: %s, key_file: %s}
  indexes:
    - name: "127"
      host: %s
      namespaces:
        - {namespace: node9-vectors, subjects: [user_id]}
        - {namespace: node9-records, subjects: [user_id]}
        - {namespace: langchain, subjects: [user_id]}
        - {namespace: go-grpc, subjects: [user_id]}
        - {namespace: go-rest, subjects: [user_id]}
        - {namespace: __default__, subjects: [user_id]}
    - name: localhost
      host: %s
      api: documents
      namespaces: [{namespace: node9-docs, subjects: [user_id]}]
capture:
  ledger: {sqlite: ledger.db}
  mode: strict
forget:
  signing_key: signing.pem
  log_origin: lethe.test/crash-log
  admin: {listen: %s, tokens_file: tokens.json}
log: {level: debug}
`, pcAddr, cert.PEMPath, cert.KeyPath, vectorsUpstream, docsUpstream, f.admin)), 0o600))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY="+key)
	f.start(t)
	vectorsHost, docsHost := "https://127.0.0.1:"+port, "https://localhost:"+port

	nodeStep := func(step string) map[string]any {
		t.Helper()
		env := append(os.Environ(), "LETHE_MATRIX_STEP="+step, "LETHE_MATRIX_DOCS_HOST="+docsHost, "NODE_EXTRA_CA_CERTS="+cert.PEMPath)
		out := sdktest.RunNode(t, node, dir, env, "pinecone-sdkmatrix.mjs", vectorsHost, key)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		return got
	}
	sent := map[string][]sdkRequest{}
	record := func(client string) {
		sent[client] = append(vectorsSeen.take(), docsSeen.take()...)
		for _, r := range sent[client] {
			t.Logf("%s sent: %s", client, r)
		}
	}

	// Node SDK 9.x: vectors, records and documents APIs.
	assert.Equal(t, map[string]any{
		"vectorsQuery":             []any{"v9-a1", "v9-m1"},
		"recordsSearch":            []any{"r9-a1"},
		"documentsUpserted":        5.0,
		"documentsUpdated":         2.0,
		"documentsDeleted":         1.0,
		"documentsDeletedByFilter": 1.0,
		"documentsSearch":          []any{"d9-a1"},
	}, nodeStep("node9"))
	record("node 9.0.0")

	// LangChain.js PineconeStore on the Node SDK 5.x.
	assert.Equal(t, map[string]any{
		"added":          []any{"lc-a1", "lc-a2", "lc-b1"},
		"search":         []any{[]any{"lc-b1", "bob"}},
		"afterDelete":    []any{"lc-a1", "lc-b1"},
		"addedByDefault": []any{"dlc-b1"},
	}, nodeStep("langchain"))
	record("langchain 1.0.3 / node 5.1.2")

	// go-pinecone v5: gRPC for vectors, REST for records (UpsertRecords,
	// SearchRecords; it has no REST update or delete, so the records'
	// update and delete go over gRPC as an application's would).
	ctx := ctxT(t)
	rest := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Roots}}}
	tlsCreds := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: cert.Roots}))
	goGRPC := sdktest.GoIndex(t, vectorsHost, key, "go-grpc", rest, tlsCreds)
	meta := func(fields map[string]any) *gopinecone.Metadata { return sdktest.Meta(t, fields) }
	_, err = goGRPC.UpsertVectors(ctx, []*gopinecone.Vector{
		sdktest.Vec("g-a1", []float32{1, 0, 0}, meta(map[string]any{"user_id": "alice", "year": 2024, "weight": 0.5})),
		sdktest.Vec("g-a2", []float32{0.9, 0.1, 0}, meta(map[string]any{"user_id": "alice"})),
		sdktest.Vec("g-b1", []float32{0, 1, 0}, meta(map[string]any{"user_id": "bob"})),
		sdktest.Vec("g-m1", []float32{0, 0, 1}, meta(map[string]any{"user_id": "bob"})),
	})
	require.NoError(t, err)
	require.NoError(t, goGRPC.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "g-b1", Metadata: meta(map[string]any{"topic": "sailing"})}))
	require.NoError(t, goGRPC.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "g-m1", Metadata: meta(map[string]any{"user_id": "alice"})}))
	require.NoError(t, goGRPC.DeleteVectorsById(ctx, []string{"g-a2"}))
	aliceFilter := meta(map[string]any{"user_id": map[string]any{"$eq": "alice"}})
	queried, err := goGRPC.QueryByVectorValues(ctx, &gopinecone.QueryByVectorValuesRequest{Vector: []float32{1, 0, 0}, TopK: 10, MetadataFilter: aliceFilter})
	require.NoError(t, err)
	assert.Equal(t, []string{"g-a1", "g-m1"}, scoredIDs(queried.Matches))
	record("go-pinecone v5.2.0 gRPC")

	goREST := sdktest.GoIndex(t, vectorsHost, key, "go-rest", rest, tlsCreds)
	require.NoError(t, goREST.UpsertRecords(ctx, []*gopinecone.IntegratedRecord{
		{"_id": "gr-a1", "chunk_text": "alice likes hiking", "user_id": "alice"},
		{"_id": "gr-a2", "chunk_text": "alice likes trail shoes", "user_id": "alice"},
		{"_id": "gr-b1", "chunk_text": "bob likes sailing", "user_id": "bob", "year": 2023},
	}))
	require.NoError(t, goREST.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "gr-b1", Metadata: meta(map[string]any{"topic": "sailing"})}))
	require.NoError(t, goREST.DeleteVectorsById(ctx, []string{"gr-a2"}))
	searched := goSearchRecords(t, goREST, "gr-a1", map[string]any{"user_id": map[string]any{"$eq": "alice"}})
	assert.Equal(t, []string{"gr-a1"}, searched)
	byDefault := sdktest.GoIndex(t, vectorsHost, key, "", rest, tlsCreds)
	_, err = byDefault.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("dg-a1", []float32{1, 0, 0}, meta(map[string]any{"user_id": "alice"}))})
	require.NoError(t, err)
	require.NoError(t, byDefault.UpsertRecords(ctx, []*gopinecone.IntegratedRecord{{"_id": "dgr-b1", "chunk_text": "bob in the default namespace", "user_id": "bob"}}))
	record("go-pinecone v5.2.0 REST")

	// One forget of alice across both indexes.
	_, payload := f.forgetViaCLI(t, "alice")
	vectorsSeen.take() // forget's own requests, and the reads below, are no client's
	docsSeen.take()
	want := map[string]int64{"127/node9-vectors": 2, "127/node9-records": 1, "127/langchain": 1, "127/go-grpc": 2, "127/go-rest": 1,
		"127/__default__": 3, "localhost/node9-docs": 2}
	for table, deleted := range want {
		l := certLayer(t, payload, table)
		assert.Equal(t, "pinecone", l.Store, table)
		assert.Equal(t, deleted, l.Deleted, table)
		assert.Zero(t, l.Residual, table)
		assert.True(t, l.VerifiedAbsent, table)
	}
	assert.Len(t, payload.Layers, len(want), "one layer per namespace rule")

	// Read the indexes directly: alice's records are gone, bob's all there.
	present := map[string][]string{
		"node9-vectors": vectorsPresent(t, vectorsUpstream, key, "node9-vectors", "v9-a1", "v9-a2", "v9-m1", "v9-b1", "v9-f1"),
		"node9-records": vectorsPresent(t, vectorsUpstream, key, "node9-records", "r9-a1", "r9-a2", "r9-b1"),
		"langchain":     vectorsPresent(t, vectorsUpstream, key, "langchain", "lc-a1", "lc-a2", "lc-b1"),
		"go-grpc":       vectorsPresent(t, vectorsUpstream, key, "go-grpc", "g-a1", "g-a2", "g-m1", "g-b1"),
		"go-rest":       vectorsPresent(t, vectorsUpstream, key, "go-rest", "gr-a1", "gr-a2", "gr-b1"),
		"__default__":   vectorsPresent(t, vectorsUpstream, key, "__default__", "dv9-a1", "dr9-a1", "dg-a1", "dv9-b1", "dgr-b1", "dlc-b1"),
		"node9-docs":    documentsPresent(t, docsUpstream, key, "node9-docs", "d9-a1", "d9-a2", "d9-m1", "d9-b1", "d9-f1"),
	}
	assert.Equal(t, map[string][]string{
		"node9-vectors": {"v9-b1"}, "node9-records": {"r9-b1"}, "langchain": {"lc-b1"},
		"go-grpc": {"g-b1"}, "go-rest": {"gr-b1"}, "__default__": {"dgr-b1", "dlc-b1", "dv9-b1"}, "node9-docs": {"d9-b1"},
	}, present)

	vectorsSeen.take()
	docsSeen.take()

	// What docs/pinecone.md says each client sends (strict mode relayed all of it).
	node9, node5, goGRPCUA, goRESTUA := `^@pinecone-database/pinecone v9\.0\.0; lang=typescript; node v\S+$`,
		`^@pinecone-database/pinecone v5\.1\.1; lang=typescript; node v\S+$`, `^go-client\[grpc\]/v5\.2\.0 grpc-go/\S+$`, `^go-client/v5\.2\.0$`
	assert.Equal(t, []string{
		"POST /vectors/upsert 2026-07", "POST /vectors/update 2026-07", "POST /vectors/update 2026-07", "POST /vectors/delete 2026-07", "POST /vectors/delete 2026-07", "POST /query 2026-07",
		"POST /records/namespaces/node9-records/upsert 2026-07", "POST /records/namespaces/node9-records/search 2026-07", "POST /vectors/delete 2026-07",
		"POST /vectors/upsert 2026-07", "POST /records/namespaces/__default__/upsert 2026-07",
		"POST /namespaces/node9-docs/documents/upsert 2026-07", "POST /namespaces/node9-docs/documents/update 2026-07",
		"POST /namespaces/node9-docs/documents/delete 2026-07", "POST /namespaces/node9-docs/documents/delete 2026-07",
		"POST /namespaces/node9-docs/documents/search 2026-07",
	}, callsMatching(sent["node 9.0.0"], node9))
	langchain := sent["langchain 1.0.3 / node 5.1.2"]
	assert.Equal(t, []string{"POST /vectors/upsert 2025-01", "POST /query 2025-01", "POST /vectors/delete 2025-01", "POST /query 2025-01", "POST /vectors/upsert 2025-01"},
		callsMatching(langchain, node5))
	assert.Contains(t, langchain[4].Body, `\"namespace\":\"\"`, "the Node SDK 5.x names the default namespace \"\"")
	assert.Equal(t, []string{"POST /VectorService/Upsert 2025-10", "POST /VectorService/Update 2025-10", "POST /VectorService/Update 2025-10",
		"POST /VectorService/Delete 2025-10", "POST /VectorService/Query 2025-10"}, callsMatching(sent["go-pinecone v5.2.0 gRPC"], goGRPCUA))
	goRESTSent := sent["go-pinecone v5.2.0 REST"]
	assert.Equal(t, []string{"POST /records/namespaces/go-rest/upsert 2025-10", "POST /records/namespaces/go-rest/search 2025-10", "POST /records/namespaces/__default__/upsert 2025-10"},
		callsMatching(goRESTSent, goRESTUA))
	assert.Contains(t, goRESTSent[0].Body, `\n{\"_id\":\"gr-a2\"`, "NDJSON, one record per line")
	assert.True(t, strings.HasSuffix(goRESTSent[0].Body, `\n"`), "go-pinecone ends each line, the last too, with a newline: %s", goRESTSent[0].Body)
	nodeRecords := sentWith(sent["node 9.0.0"], "r9-a2").Body
	assert.False(t, strings.HasSuffix(nodeRecords, `\n"`), "the Node SDK joins the lines: no newline after the last: %s", nodeRecords)
	assert.Equal(t, `protobuf {1:43 bytes 2="__default__"}`, goRESTSent[4].Body, "go-pinecone names the default namespace __default__")
	assert.Contains(t, sentWith(sent["node 9.0.0"], "dv9-a1").Body, `\"namespace\":\"__default__\"`, "so does the Node SDK 9.x")

	// And through the proxy every client's reads find bob's, none of alice's.
	nobody := map[string]any{"vectors": []any{}, "records": []any{}, "documents": []any{}, "langchain": []any{}}
	assert.Equal(t, map[string]any{
		"alice": nobody,
		"bob":   map[string]any{"vectors": []any{"v9-b1"}, "records": []any{"r9-b1"}, "documents": []any{"d9-b1"}, "langchain": []any{"lc-b1"}},
	}, nodeStep("read"))
	bobQueried, err := goGRPC.QueryByVectorValues(ctx, &gopinecone.QueryByVectorValuesRequest{Vector: []float32{1, 1, 1}, TopK: 10})
	require.NoError(t, err)
	assert.Equal(t, []string{"g-b1"}, scoredIDs(bobQueried.Matches))
	assert.Equal(t, []string{"gr-b1"}, goSearchRecords(t, goREST, "gr-b1", nil))
	record("after the forget")

	// alice is tombstoned: go-pinecone's gRPC upsert is refused LT003; its
	// REST UpsertRecords is refused too, but v5.2.0 does not look at the
	// answer's status and returns no error.
	_, err = goGRPC.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("g-a3", []float32{1, 0, 0}, meta(map[string]any{"user_id": "alice"}))})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LT003")
	require.NoError(t, goREST.UpsertRecords(ctx, []*gopinecone.IntegratedRecord{{"_id": "gr-a3", "chunk_text": "alice again", "user_id": "alice"}}),
		"go-pinecone v5.2.0 reports no error for a refused UpsertRecords; if it does now, docs/pinecone.md's note on it is stale")
	assert.Empty(t, vectorsPresent(t, vectorsUpstream, key, "go-rest", "gr-a3"), "the refused record never reached the index")
}

// callsMatching is the requests whose User-Agent matches userAgent, as
// "METHOD path api-version" (the query left out); the others' are left
// out.
func callsMatching(sent []sdkRequest, userAgent string) []string {
	ua := regexp.MustCompile(userAgent)
	var out []string
	for _, r := range sent {
		path, _, _ := strings.Cut(r.Path, "?")
		if !ua.MatchString(r.UserAgent) {
			continue
		}
		out = append(out, r.Method+" "+path+" "+r.APIVersion)
	}
	return out
}

// goSearchRecords is go-pinecone's SearchRecords by the id of a record,
// filtered, as the ids of its hits. (A text query cannot be sent: v5.2.0
// leaves SearchRecordsQuery.Inputs out of the request it builds.)
func goSearchRecords(t *testing.T, idx *gopinecone.IndexConnection, id string, filter map[string]any) []string {
	t.Helper()
	q := gopinecone.SearchRecordsQuery{TopK: 10, Id: &id}
	if filter != nil {
		q.Filter = &filter
	}
	res, err := idx.SearchRecords(ctxT(t), &gopinecone.SearchRecordsRequest{Query: q})
	require.NoError(t, err)
	var ids []string
	for _, h := range res.Result.Hits {
		ids = append(ids, h.Id)
	}
	slices.Sort(ids)
	return ids
}

func scoredIDs(matches []*gopinecone.ScoredVector) []string {
	var ids []string
	for _, m := range matches {
		ids = append(ids, m.Vector.Id)
	}
	slices.Sort(ids)
	return ids
}

// vectorsPresent fetches ids from the index host itself (GET
// /vectors/fetch) and returns those it holds, sorted.
func vectorsPresent(t *testing.T, host, key, namespace string, ids ...string) []string {
	t.Helper()
	q := url.Values{"ids": ids, "namespace": {namespace}}
	var out struct {
		Vectors map[string]json.RawMessage `json:"vectors"`
	}
	indexHostJSON(t, http.MethodGet, host+"/vectors/fetch?"+q.Encode(), key, nil, &out)
	return sdktest.MapKeys(out.Vectors)
}

// documentsPresent fetches ids from the document index host itself (POST
// /namespaces/{ns}/documents/fetch) and returns those it holds, sorted.
func documentsPresent(t *testing.T, host, key, namespace string, ids ...string) []string {
	t.Helper()
	var out struct {
		Documents map[string]json.RawMessage `json:"documents"`
	}
	indexHostJSON(t, http.MethodPost, host+"/namespaces/"+namespace+"/documents/fetch", key, map[string]any{"ids": ids}, &out)
	return sdktest.MapKeys(out.Documents)
}

func indexHostJSON(t *testing.T, method, u, key string, body any, out any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, reader)
	require.NoError(t, err)
	req.Header.Set("Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Pinecone-Api-Version", "2026-07")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, u, b)
	require.NoError(t, json.Unmarshal(b, out), string(b))
}

// sentWith is the first request in sent whose body names id.
func sentWith(sent []sdkRequest, id string) sdkRequest {
	for _, r := range sent {
		if strings.Contains(r.Body, id) {
			return r
		}
	}
	return sdkRequest{}
}
