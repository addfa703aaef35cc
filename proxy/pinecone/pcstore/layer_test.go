package pcstore

import (
	"context"
	"crypto/tls"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

const testKey = "forget-key-0123"

// testIndex is an emulated index host: Index is forget's connection to
// it, write an application's go-pinecone connection to a namespace.
type testIndex struct {
	*Index
	write func(ns string) *pinecone.IndexConnection
}

// startIndex serves an emulator with cfg (cleartext h2c, or TLS with a
// throwaway CA) and opens forget's Index on it.
func startIndex(t *testing.T, cfg emulator.Config, secure bool, verify time.Duration) testIndex {
	t.Helper()
	cfg.APIKey = testKey
	srv := emulator.New(cfg)
	var (
		serverTLS *tls.Config
		cert      sdktest.Cert
		dial      []grpc.DialOption
	)
	if secure {
		cert = sdktest.NewCert(t, "pinecone forget test")
		serverTLS = cert.Server
		dial = append(dial, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: cert.Roots})))
	}
	url, err := srv.Start("127.0.0.1:0", serverTLS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	ix, err := Open(Config{Name: "idx", Host: url, APIKey: testKey, RootCAs: cert.Roots, VerifyDeadline: verify})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	return testIndex{Index: ix, write: func(ns string) *pinecone.IndexConnection {
		return sdktest.GoIndex(t, url, testKey, ns, nil, dial...)
	}}
}

func (ti testIndex) upsert(t *testing.T, ns string, vs ...*pinecone.Vector) {
	t.Helper()
	for chunk := range slices.Chunk(vs, 500) {
		_, err := ti.write(ns).UpsertVectors(sdktest.Context(t), chunk)
		require.NoError(t, err)
	}
}

func (ti testIndex) present(t *testing.T, ns string, ids ...string) []string {
	t.Helper()
	res, err := ti.write(ns).FetchVectors(sdktest.Context(t), ids)
	require.NoError(t, err)
	return sdktest.MapKeys(res.Vectors)
}

func (ti testIndex) layers(t *testing.T, rules ...Rule) []connector.Layer {
	t.Helper()
	ls, err := ti.Layers(rules)
	require.NoError(t, err)
	return ls
}

func rec(t *testing.T, id string, values []float32, md map[string]any) *pinecone.Vector {
	return sdktest.Vec(id, values, sdktest.Meta(t, md))
}

// aliceAndBob writes, in namespace docs: alice's records a1 (in the
// ledger), a2 and a3 (written before Lethe: found by the filter, a3 by a
// list field), n1 about subject "42" as a number, moved (in alice's ledger
// ids, but its metadata now names bob) and bob's b1; and alice's o1 in
// another namespace.
func aliceAndBob(t *testing.T, ti testIndex) {
	ti.upsert(t, "docs",
		rec(t, "a1", []float32{1, 0, 0}, map[string]any{"user_id": "alice", "page": 1}),
		rec(t, "a2", []float32{0, 1, 0}, map[string]any{"user_id": "alice"}),
		rec(t, "a3", []float32{0, 0, 1}, map[string]any{"participants": []any{"bob", "alice"}}),
		rec(t, "n1", []float32{1, 1, 0}, map[string]any{"user_id": 42}),
		rec(t, "moved", []float32{1, 0, 1}, map[string]any{"user_id": "bob"}),
		rec(t, "b1", []float32{0, 1, 1}, map[string]any{"user_id": "bob", "participants": []any{"carol"}}),
	)
	ti.upsert(t, "other", rec(t, "o1", []float32{1, 0, 0}, map[string]any{"user_id": "alice"}))
}

var aliceLedger = []string{"a1", "moved", "never-written"}

func TestLayer_MatchingFindsTheSubjectsRecordsOnly(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "cleartext gRPC", true: "TLS"}[secure], func(t *testing.T) {
			ti := startIndex(t, emulator.Config{}, secure, time.Minute)
			aliceAndBob(t, ti)
			l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[0]
			require.Equal(t, "idx/docs", l.Name())
			ctx := sdktest.Context(t)

			got, err := l.Matching(ctx, "alice", aliceLedger)
			require.NoError(t, err)
			assert.Equal(t, []string{"a1", "a2", "a3"}, got, "not moved (names bob now), not o1 (another namespace)")
			got, err = l.Matching(ctx, "42", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"n1"}, got, "a number names the subject written as its JSON text")
			got, err = l.Matching(ctx, "carol", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"b1"}, got)
			got, err = l.Matching(ctx, "dave", []string{"a1"})
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}

func TestLayer_DeleteJournalsEachChunkBeforeSendingIt(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	aliceAndBob(t, ti)
	var many []*pinecone.Vector
	var ledgerIDs []string
	for i := range 1001 {
		id := "m" + strconv.Itoa(i)
		many = append(many, rec(t, id, []float32{1, float32(i), 0}, map[string]any{"user_id": "alice"}))
		ledgerIDs = append(ledgerIDs, id)
	}
	ti.upsert(t, "docs", many...)
	l := ti.layers(t, Rule{Namespace: "", Fields: []string{"user_id", "participants"}}, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[1]
	ctx := sdktest.Context(t)

	var chunks []int
	deleted, err := l.Delete(ctx, "alice", append(ledgerIDs, aliceLedger...), func(ids []string) error {
		chunks = append(chunks, len(ids))
		assert.Equal(t, len(ids), len(ti.present(t, "docs", ids...)), "journaled before the delete is sent")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1000, 4}, chunks, "1,001 + a1, a2, a3 in chunks of 1,000")
	assert.Len(t, deleted, 1004)
	assert.Empty(t, ti.present(t, "docs", deleted...))
	assert.Equal(t, []string{"b1", "moved", "n1"}, ti.present(t, "docs", "a1", "a2", "a3", "n1", "moved", "b1"))
	assert.Equal(t, []string{"o1"}, ti.present(t, "other", "o1"))

	a, err := l.Residual(ctx, "alice", aliceLedger)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
}

func TestLayer_DeleteStopsWhenTheJournalFails(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}})[0]
	_, err := l.Delete(sdktest.Context(t), "alice", aliceLedger, func([]string) error { return fmt.Errorf("journal down") })
	require.ErrorContains(t, err, "journal down")
	assert.Equal(t, []string{"a1", "a2"}, ti.present(t, "docs", "a1", "a2"), "nothing deleted that was not journaled")
}

// A filter matching more than topK records is queried again with other
// probe vectors.
func TestLayer_MatchingQueriesAgainWhileResultsAreFull(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	ti.topK = 2
	ti.upsert(t, "docs",
		rec(t, "r1", []float32{1, 0, 0}, map[string]any{"user_id": "alice"}),
		rec(t, "r2", []float32{0, 1, 0}, map[string]any{"user_id": "alice"}),
		rec(t, "r3", []float32{0, 0, 1}, map[string]any{"user_id": "alice"}),
		rec(t, "r4", []float32{-1, 0, 0}, map[string]any{"user_id": "alice"}),
		rec(t, "r5", []float32{0, -1, 0}, map[string]any{"user_id": "alice"}),
		rec(t, "b1", []float32{0, 0, -1}, map[string]any{"user_id": "bob"}),
	)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}})[0]
	got, err := l.Matching(sdktest.Context(t), "alice", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"r1", "r2", "r3", "r4", "r5"}, got)
}

var attemptRE = regexp.MustCompile(`absent at attempt (\d+), `)

func TestLayer_ResidualPollsUntilTheDeleteIsVisible(t *testing.T) {
	ti := startIndex(t, emulator.Config{DeleteDelay: 700 * time.Millisecond}, false, time.Minute)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[0]
	ctx := sdktest.Context(t)
	began := time.Now()
	_, err := l.Delete(ctx, "alice", aliceLedger, func([]string) error { return nil })
	require.NoError(t, err)
	got, err := l.Matching(ctx, "alice", aliceLedger)
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2", "a3"}, got, "the emulator still shows the deleted records")

	a, err := l.Residual(ctx, "alice", aliceLedger)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.GreaterOrEqual(t, time.Since(began), 700*time.Millisecond, "not absent before the delete became visible")
	m := attemptRE.FindStringSubmatch(a.Method)
	require.NotNil(t, m, a.Method)
	attempts, _ := strconv.Atoi(m[1])
	assert.Greater(t, attempts, 1, a.Method)
	assert.Contains(t, a.Method, "fetch of the ledger's 3 ids and of the ids found by queries filtered on metadata user_id, participants")
	assert.Contains(t, a.Method, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")
	assert.Equal(t, []string{
		"describe_index_stats (the index's dimension)",
		"fetch namespace=docs ids=$ledger_ids (chunks of 1000)",
		`query namespace=docs filter={"user_id":{"$eq":$subject}} topK=10000 vector=$probe includeMetadata=false`,
		`query namespace=docs filter={"user_id":{"$eq":$subject_number}} topK=10000 vector=$probe includeMetadata=false (when the subject is the text of a number)`,
		`query namespace=docs filter={"participants":{"$eq":$subject}} topK=10000 vector=$probe includeMetadata=false`,
		`query namespace=docs filter={"participants":{"$eq":$subject_number}} topK=10000 vector=$probe includeMetadata=false (when the subject is the text of a number)`,
		"fetch namespace=docs ids=$query_ids (chunks of 1000)",
	}, a.Queries)
	for _, s := range append(a.Queries, a.Method) {
		assert.NotContains(t, s, "alice")
		assert.NotContains(t, s, "a1")
	}
}

func TestLayer_ResidualAtTheDeadlineIsNotZero(t *testing.T) {
	ti := startIndex(t, emulator.Config{DeleteDelay: time.Hour}, false, 500*time.Millisecond)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[0]
	ctx := sdktest.Context(t)
	_, err := l.Delete(ctx, "alice", aliceLedger, func([]string) error { return nil })
	require.NoError(t, err)
	a, err := l.Residual(ctx, "alice", aliceLedger)
	require.NoError(t, err)
	assert.EqualValues(t, 3, a.Residual)
	assert.Contains(t, a.Method, "3 still present at attempt")
	assert.Contains(t, a.Method, "had not yet reached the delete's x-pinecone-request-lsn")
}

// Records still found once the reads have indexed the delete are there,
// not lagging: Residual says so at once rather than at the deadline.
func TestLayer_ResidualReportsRecordsTheIndexedReadsStillHold(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Hour)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}})[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := l.Residual(ctx, "alice", aliceLedger)
	require.NoError(t, err, "returned before the context's 30 s, far before the hour's deadline")
	assert.EqualValues(t, 2, a.Residual)
	assert.Contains(t, a.Method, "2 still present at attempt 1,")
}

func TestAnyLayer_CoversEveryNamespaceWithoutItsOwnRule(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	ti.upsert(t, "a", rec(t, "x1", []float32{1, 0, 0}, map[string]any{"owner": "alice"}))
	ti.upsert(t, "b",
		rec(t, "y1", []float32{1, 0, 0}, map[string]any{"owner": "alice"}),
		rec(t, "y2", []float32{0, 1, 0}, map[string]any{"owner": "bob"}),
		rec(t, "x1", []float32{0, 1, 0}, map[string]any{"owner": "bob"}))
	ti.upsert(t, "", rec(t, "z1", []float32{1, 0, 0}, map[string]any{"owner": "alice"}))
	ti.upsert(t, "docs", rec(t, "d1", []float32{1, 0, 0}, map[string]any{"owner": "alice", "user_id": "bob"}))
	ls := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}}, Rule{Namespace: "*", Fields: []string{"owner"}})
	anyNS, ok := ls[1].(connector.Scoped)
	require.True(t, ok, "the * layer is Scoped")
	require.Equal(t, "idx/*", anyNS.Name())
	for table, want := range map[string]bool{"idx/a": true, "idx/__default__": true, "idx/new": true, "idx/docs": false, "idx/*": false, "other/a": false, "idxx/a": false} {
		assert.Equal(t, want, anyNS.Holds(table), table)
	}
	_, explicit := ls[0].(connector.Scoped)
	assert.False(t, explicit, "a namespace's own layer is not Scoped")

	ctx := sdktest.Context(t)
	got, err := anyNS.Matching(ctx, "alice", []string{"x1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"z1", "x1", "y1"}, got, "namespaces in order; x1 of b names bob; docs has its own rule")

	var journaled []string
	deleted, err := anyNS.Delete(ctx, "alice", []string{"x1"}, func(ids []string) error {
		journaled = append(journaled, ids...)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"z1", "x1", "y1"}, deleted)
	assert.Equal(t, deleted, journaled)
	a, err := anyNS.Residual(ctx, "alice", []string{"x1"})
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.Contains(t, a.Method, "in each namespace describe_index_stats listed except those with a rule of their own")
	assert.Contains(t, a.Queries, "fetch namespace=$namespace ids=$ledger_ids (chunks of 1000)")
	assert.Equal(t, []string{"x1", "y2"}, ti.present(t, "b", "x1", "y1", "y2"))
	assert.Equal(t, []string{"d1"}, ti.present(t, "docs", "d1"))
	assert.Empty(t, ti.present(t, "a", "x1"))
}

func TestOpen_HTTPSHostNeedsAnAPIKey(t *testing.T) {
	_, err := Open(Config{Name: "idx", Host: "https://idx-abc.svc.pinecone.io"})
	require.ErrorIs(t, err, ErrNoAPIKey)
	ix, err := Open(Config{Name: "idx", Host: "http://127.0.0.1:5080"})
	require.NoError(t, err, "Pinecone Local takes any key")
	require.NoError(t, ix.Close())
}

func TestLayer_WrongAPIKeyErrorNamesTheFixNotTheSubject(t *testing.T) {
	srv := emulator.New(emulator.Config{APIKey: testKey})
	url, err := srv.Start("127.0.0.1:0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	ix, err := Open(Config{Name: "idx", Host: url, APIKey: "wrong"})
	require.NoError(t, err)
	defer ix.Close()
	ls, err := ix.Layers([]Rule{{Namespace: "docs", Fields: []string{"user_id"}}})
	require.NoError(t, err)
	_, err = ls[0].Matching(sdktest.Context(t), "alice", []string{"a1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unauthenticated")
	assert.Contains(t, err.Error(), "api_key_env")
	assert.NotContains(t, err.Error(), "alice")
	assert.NotContains(t, err.Error(), "a1")
}

func TestAnyLayer_EmptyIndexHoldsNothing(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	l := ti.layers(t, Rule{Namespace: "*", Fields: []string{"owner"}})[0]
	a, err := l.Residual(sdktest.Context(t), "alice", []string{"x1"})
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.Contains(t, a.Method, "absent at attempt 1, ")
	assert.Contains(t, a.Method, "describe_index_stats listed no namespace to search")
}
