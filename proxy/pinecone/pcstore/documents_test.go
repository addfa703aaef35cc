package pcstore

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// docIndex is an emulated document index: Index is forget's connection to
// it (API documents), post an application's REST call to it.
type docIndex struct {
	*Index
	url    string
	client *http.Client
}

// startDocIndex serves an emulator with cfg (cleartext, or TLS with a
// throwaway CA) and opens forget's Index on it as a document index.
func startDocIndex(t *testing.T, cfg emulator.Config, secure bool, verify time.Duration) docIndex {
	t.Helper()
	cfg.APIKey = testKey
	srv := emulator.New(cfg)
	var (
		serverTLS *tls.Config
		cert      sdktest.Cert
		client    = &http.Client{}
	)
	if secure {
		cert = sdktest.NewCert(t, "pinecone documents forget test")
		serverTLS = cert.Server
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Roots}}
	}
	url, err := srv.Start("127.0.0.1:0", serverTLS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	ix, err := Open(Config{Name: "idx", Host: url, APIKey: testKey, RootCAs: cert.Roots, VerifyDeadline: verify, API: APIDocuments})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	return docIndex{Index: ix, url: url, client: client}
}

// post sends an application's documents call and decodes its answer.
func (di docIndex) post(t *testing.T, ns, op string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, di.url+"/namespaces/"+ns+"/documents/"+op, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Api-Key", testKey)
	req.Header.Set("X-Pinecone-Api-Version", "2026-07")
	req.Header.Set("Content-Type", "application/json")
	resp, err := di.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, string(answer))
	var out map[string]any
	require.NoError(t, json.Unmarshal(answer, &out))
	return out
}

func (di docIndex) upsert(t *testing.T, ns string, docs ...map[string]any) {
	t.Helper()
	for start := 0; start < len(docs); start += 500 {
		di.post(t, ns, "upsert", map[string]any{"documents": docs[start:min(start+500, len(docs))]})
	}
}

// present is the ids among ids that ns still shows.
func (di docIndex) present(t *testing.T, ns string, ids ...string) []string {
	t.Helper()
	docs, _ := di.post(t, ns, "fetch", map[string]any{"ids": ids})["documents"].(map[string]any)
	out := []string{}
	for id := range docs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (di docIndex) layers(t *testing.T, rules ...Rule) []connector.Layer {
	t.Helper()
	ls, err := di.Layers(rules)
	require.NoError(t, err)
	return ls
}

// aliceAndBobDocuments writes, in namespace notes: alice's documents a1
// (in the ledger), a2 and a3 (written before Lethe: found by the filter,
// a3 by a list field), n1 about subject "42" as a number, moved (in
// alice's ledger ids, but it names bob now), b1 of bob and c1 that names
// alice only in a field that is no subject field; and alice's o1 in
// another namespace.
func aliceAndBobDocuments(t *testing.T, di docIndex) {
	di.upsert(t, "notes",
		map[string]any{"_id": "a1", "user_id": "alice", "title": "first", "page": 1},
		map[string]any{"_id": "a2", "user_id": "alice", "title": "second"},
		map[string]any{"_id": "a3", "participants": []any{"bob", "alice"}, "title": "shared"},
		map[string]any{"_id": "n1", "user_id": 42, "title": "numbered"},
		map[string]any{"_id": "moved", "user_id": "bob", "title": "moved"},
		map[string]any{"_id": "b1", "user_id": "bob", "participants": []any{"carol"}, "title": "bob's"},
		map[string]any{"_id": "c1", "author": "alice", "title": "not a subject field"},
	)
	di.upsert(t, "other", map[string]any{"_id": "o1", "user_id": "alice", "title": "elsewhere"})
}

var (
	aliceDocLedger = []string{"a1", "moved", "never-written"}
	noteFields     = []string{"user_id", "participants"}
)

func TestDocuments_MatchingFindsTheSubjectsDocumentsOnly(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "cleartext", true: "TLS"}[secure], func(t *testing.T) {
			di := startDocIndex(t, emulator.Config{}, secure, time.Minute)
			aliceAndBobDocuments(t, di)
			l := di.layers(t, Rule{Namespace: "notes", Fields: noteFields})[0]
			require.Equal(t, "idx/notes", l.Name())
			ctx := sdktest.Context(t)
			for subject, want := range map[string][]string{
				"alice": {"a1", "a2", "a3"}, // not moved (names bob now), not o1 (another namespace), not c1 (author is no subject field)
				"42":    {"n1"},             // a number names the subject written as its JSON text
				"carol": {"b1"},
				"dave":  {},
			} {
				got, err := l.Matching(ctx, subject, aliceDocLedger)
				require.NoError(t, err)
				assert.ElementsMatch(t, want, got, subject)
			}
		})
	}
}

// Two people in one namespace, one forgotten: the delete goes through the
// documents endpoint, becomes visible late, and Residual waits for the
// reads' max indexed LSN to pass the delete's request LSN; bob's
// documents stay.
func TestDocuments_ForgetOneOfTwoWaitsForTheLateDelete(t *testing.T) {
	di := startDocIndex(t, emulator.Config{DeleteDelay: 700 * time.Millisecond}, false, time.Minute)
	aliceAndBobDocuments(t, di)
	l := di.layers(t, Rule{Namespace: "notes", Fields: noteFields})[0]
	ctx := sdktest.Context(t)
	began := time.Now()
	var journaled []string
	deleted, err := l.Delete(ctx, "alice", aliceDocLedger, func(ids []string) error {
		assert.Equal(t, ids, di.present(t, "notes", ids...), "journaled before the delete is sent")
		journaled = append(journaled, ids...)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "a2", "a3"}, deleted)
	assert.Equal(t, deleted, journaled)
	got, err := l.Matching(ctx, "alice", aliceDocLedger)
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2", "a3"}, got, "the emulator still shows the deleted documents")

	a, err := l.Residual(ctx, "alice", aliceDocLedger)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.GreaterOrEqual(t, time.Since(began), 700*time.Millisecond, "not absent before the delete became visible")
	m := attemptRE.FindStringSubmatch(a.Method)
	require.NotNil(t, m, a.Method)
	attempts, _ := strconv.Atoi(m[1])
	assert.Greater(t, attempts, 1, a.Method)
	assert.Contains(t, a.Method, "documents fetch of the ledger's 3 ids and of every document a fetch filtered on user_id, participants returns")
	assert.Contains(t, a.Method, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")
	assert.Equal(t, []string{
		`POST /namespaces/notes/documents/fetch {"filter":{"user_id":{"$eq":$subject}},"include_fields":["user_id","participants"],"limit":10000} (each page, with pagination_token)`,
		`POST /namespaces/notes/documents/fetch {"filter":{"user_id":{"$eq":$subject_number}},"include_fields":["user_id","participants"],"limit":10000} (when the subject is the text of a number)`,
		`POST /namespaces/notes/documents/fetch {"filter":{"participants":{"$eq":$subject}},"include_fields":["user_id","participants"],"limit":10000} (each page, with pagination_token)`,
		`POST /namespaces/notes/documents/fetch {"filter":{"participants":{"$eq":$subject_number}},"include_fields":["user_id","participants"],"limit":10000} (when the subject is the text of a number)`,
		`POST /namespaces/notes/documents/fetch {"ids":$ledger_ids,"include_fields":["user_id","participants"]} (chunks of 1000)`,
	}, a.Queries)
	for _, s := range append(a.Queries, a.Method) {
		assert.NotContains(t, s, "alice")
		assert.NotContains(t, s, "a1")
	}
	assert.Equal(t, []string{"b1", "c1", "moved", "n1"}, di.present(t, "notes", "a1", "a2", "a3", "b1", "c1", "moved", "n1"))
	assert.Equal(t, []string{"o1"}, di.present(t, "other", "o1"))
	bob, err := l.Matching(ctx, "bob", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"b1", "moved"}, bob, "a3 named bob too, but went with alice's forget: a list field names both")
}

func TestDocuments_ResidualAtTheDeadlineIsNotZero(t *testing.T) {
	di := startDocIndex(t, emulator.Config{DeleteDelay: time.Hour}, false, 500*time.Millisecond)
	aliceAndBobDocuments(t, di)
	l := di.layers(t, Rule{Namespace: "notes", Fields: noteFields})[0]
	ctx := sdktest.Context(t)
	_, err := l.Delete(ctx, "alice", aliceDocLedger, func([]string) error { return nil })
	require.NoError(t, err)
	a, err := l.Residual(ctx, "alice", aliceDocLedger)
	require.NoError(t, err)
	assert.EqualValues(t, 3, a.Residual)
	assert.Contains(t, a.Method, "3 still present at attempt")
	assert.Contains(t, a.Method, "had not yet reached the delete's x-pinecone-request-lsn")
}

// More documents than a delete's chunk and a filter's page: every one is
// found (pages followed) and deleted 1,000 per request.
func TestDocuments_DeleteInChunksFollowsPages(t *testing.T) {
	di := startDocIndex(t, emulator.Config{}, false, time.Minute)
	var many []map[string]any
	for i := range 1001 {
		many = append(many, map[string]any{"_id": fmt.Sprintf("m%04d", i), "user_id": "alice"})
	}
	di.upsert(t, "notes", many...)
	di.upsert(t, "notes", map[string]any{"_id": "b1", "user_id": "bob"})
	l := di.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0]
	ctx := sdktest.Context(t)
	var chunks []int
	deleted, err := l.Delete(ctx, "alice", nil, func(ids []string) error {
		chunks = append(chunks, len(ids))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1000, 1}, chunks)
	assert.Len(t, deleted, 1001)
	a, err := l.Residual(ctx, "alice", nil)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.Equal(t, []string{"b1"}, di.present(t, "notes", "b1", "m0000", "m1000"))
}

// The documents fetch by filter is paged: with a page smaller than the
// matches, search follows pagination.next to the last page.
func TestDocuments_SearchFollowsFetchPages(t *testing.T) {
	di := startDocIndex(t, emulator.Config{}, false, time.Minute)
	di.docPage = 10
	var docs []map[string]any
	var want []string
	for i := range 25 {
		id := fmt.Sprintf("p%02d", i)
		docs = append(docs, map[string]any{"_id": id, "user_id": "alice"})
		want = append(want, id)
	}
	di.upsert(t, "notes", docs...)
	var pages int
	err := di.fetchDocumentsWhere(sdktest.Context(t), "notes", map[string]any{"user_id": map[string]any{"$eq": "alice"}}, []string{"user_id"},
		func([]*pinecone.Vector) { pages++ })
	require.NoError(t, err)
	assert.Equal(t, 3, pages, "25 documents in pages of 10")
	got, err := di.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0].Matching(sdktest.Context(t), "alice", nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestDocuments_AnyLayerListsNamespaces(t *testing.T) {
	di := startDocIndex(t, emulator.Config{}, false, time.Minute)
	di.upsert(t, "a", map[string]any{"_id": "x1", "owner": "alice"})
	di.upsert(t, "b", map[string]any{"_id": "y1", "owner": "alice"}, map[string]any{"_id": "y2", "owner": "bob"})
	di.upsert(t, "__default__", map[string]any{"_id": "z1", "owner": "alice"})
	di.upsert(t, "notes", map[string]any{"_id": "d1", "owner": "alice", "user_id": "bob"})
	ls := di.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}}, Rule{Namespace: "*", Fields: []string{"owner"}})
	ctx := sdktest.Context(t)
	deleted, err := ls[1].Delete(ctx, "alice", []string{"x1"}, func([]string) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"z1", "x1", "y1"}, deleted, "namespaces in order; notes has its own rule")
	a, err := ls[1].Residual(ctx, "alice", []string{"x1"})
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.Contains(t, a.Method, "in each namespace GET /namespaces listed except those with a rule of their own")
	assert.Equal(t, []string{"d1"}, di.present(t, "notes", "d1"))
	assert.Equal(t, []string{"y2"}, di.present(t, "b", "y1", "y2"))
}

// Reconcile's scan reads a document index page by page with the subject
// fields only.
func TestDocuments_ScanReadsEveryDocumentsSubjects(t *testing.T) {
	di := startDocIndex(t, emulator.Config{}, false, time.Minute)
	aliceAndBobDocuments(t, di)
	l := di.layers(t, Rule{Namespace: "notes", Fields: noteFields})[0].(connector.Scanner)
	got := map[string][]string{}
	require.NoError(t, l.Scan(sdktest.Context(t), func(batch []connector.Record) error {
		for _, r := range batch {
			assert.Equal(t, "idx/notes", r.Table)
			got[r.ID] = r.Subjects
		}
		return nil
	}))
	assert.Equal(t, map[string][]string{
		"a1": {"alice"}, "a2": {"alice"}, "a3": {"bob", "alice"}, "n1": {"42"},
		"moved": {"bob"}, "b1": {"bob", "carol"}, "c1": nil,
	}, got)
	assert.Contains(t, l.ScanMethod(), "documents/list page by page")
}

// Sweep on a document index: expired documents listed, deleted through the
// documents endpoint, and verified absent.
func TestDocuments_RetentionDeletesExpiredDocuments(t *testing.T) {
	di := startDocIndex(t, emulator.Config{DeleteDelay: 300 * time.Millisecond}, false, time.Minute)
	di.upsert(t, "notes",
		map[string]any{"_id": "old", "user_id": "alice", "uploaded_at": 1000},
		map[string]any{"_id": "new", "user_id": "alice", "uploaded_at": 5000},
		map[string]any{"_id": "undated", "user_id": "bob"})
	r := di.Retainers([]Rule{{Namespace: "notes", Fields: []string{"user_id"}, RetainBy: "uploaded_at"}})[0]
	ctx := sdktest.Context(t)
	cutoff := time.Unix(2000, 0)
	e, err := r.Expired(ctx, cutoff)
	require.NoError(t, err)
	assert.Equal(t, connector.Expiry{Expired: 1, Unreadable: 1}, e)
	var batches [][]string
	n, err := r.DeleteExpired(ctx, cutoff, 10, func(table string, ids []string) error {
		assert.Equal(t, "idx/notes", table)
		batches = append(batches, ids)
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	assert.Equal(t, [][]string{{"old"}}, batches)
	a, err := r.ResidualExpired(ctx, cutoff)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.Contains(t, a.Method, "every document id listed")
	assert.Contains(t, a.Method, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")
	assert.Equal(t, []string{"new", "undated"}, di.present(t, "notes", "old", "new", "undated"))
}

// An error from the documents API names the fix and never the key, the
// subject or a document id.
func TestDocuments_ErrorsNameTheFixNotTheData(t *testing.T) {
	ctx := sdktest.Context(t)
	srv := emulator.New(emulator.Config{APIKey: testKey})
	url, err := srv.Start("127.0.0.1:0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	wrong, err := Open(Config{Name: "idx", Host: url, APIKey: "wrong-key-456", API: APIDocuments})
	require.NoError(t, err)
	defer wrong.Close()
	_, errKey := wrong.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0].Matching(ctx, "alice", []string{"a1"})
	require.Error(t, errKey)
	assert.Contains(t, errKey.Error(), "api_key_env")

	// A host without documents endpoints (a vectors index behind a proxy
	// that serves only those): the error says to set api.
	vectorsOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":5,"message":"Not Found: alice a1"}`, http.StatusNotFound)
	}))
	defer vectorsOnly.Close()
	ix, err := Open(Config{Name: "idx", Host: vectorsOnly.URL, APIKey: "secret-key-789", API: APIDocuments})
	require.NoError(t, err)
	defer ix.Close()
	_, errPath := ix.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0].Delete(ctx, "alice", []string{"a1"}, func([]string) error { return nil })
	require.Error(t, errPath)
	assert.Contains(t, errPath.Error(), "set the index's api to vectors")

	// A 2xx that is not the documents API's answer.
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"documents": "alice a1"`))
	}))
	defer garbled.Close()
	gx, err := Open(Config{Name: "idx", Host: garbled.URL, APIKey: "secret-key-789", API: APIDocuments})
	require.NoError(t, err)
	defer gx.Close()
	_, errGarbled := gx.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0].Matching(ctx, "alice", nil)
	require.Error(t, errGarbled)
	assert.Contains(t, errGarbled.Error(), "is the index's api setting right?")

	for _, e := range []error{errKey, errPath, errGarbled} {
		for _, secret := range []string{"alice", "a1", "secret-key-789", "wrong-key-456"} {
			assert.NotContains(t, e.Error(), secret)
		}
	}
}

func (ix *Index) layers(t *testing.T, rules ...Rule) []connector.Layer {
	t.Helper()
	ls, err := ix.Layers(rules)
	require.NoError(t, err)
	return ls
}

// A delete answered without matched_records, or with more than the ids
// sent, is not taken as done.
func TestDocuments_DeleteChecksMatchedRecords(t *testing.T) {
	for answer, want := range map[string]string{
		`{}`:                    "answered without matched_records",
		`{"matched_records":5}`: "documents delete of 1 ids matched 5 documents",
		`{"matched_records":0}`: "",
	} {
		t.Run(answer, func(t *testing.T) {
			host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/namespaces/notes/documents/fetch":
					_, _ = w.Write([]byte(`{"documents":{"a1":{"_id":"a1","user_id":"alice"}},"namespace":"notes","usage":{"read_units":1}}`))
				case "/namespaces/notes/documents/delete":
					_, _ = w.Write([]byte(answer))
				default:
					http.NotFound(w, r)
				}
			}))
			defer host.Close()
			ix, err := Open(Config{Name: "idx", Host: host.URL, API: APIDocuments})
			require.NoError(t, err)
			defer ix.Close()
			_, err = ix.layers(t, Rule{Namespace: "notes", Fields: []string{"user_id"}})[0].Delete(sdktest.Context(t), "alice", []string{"a1"}, func([]string) error { return nil })
			if want == "" {
				require.NoError(t, err, "fewer matches than ids: deleted since found")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}
