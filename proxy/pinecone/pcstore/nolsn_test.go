package pcstore

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// withoutLSN drops the LSN headers from every response, as an index that
// does not send them would.
type withoutLSN struct{ http.ResponseWriter }

func (w withoutLSN) WriteHeader(code int) {
	w.Header().Del(headerRequestLSN)
	w.Header().Del(headerMaxIndexedLSN)
	w.ResponseWriter.WriteHeader(code)
}

func (w withoutLSN) Write(b []byte) (int, error) {
	w.Header().Del(headerRequestLSN)
	w.Header().Del(headerMaxIndexedLSN)
	return w.ResponseWriter.Write(b)
}

func (w withoutLSN) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w withoutLSN) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startIndexWithoutLSN serves an emulator (cleartext h2c) whose responses
// carry no LSN headers.
func startIndexWithoutLSN(t *testing.T, cfg emulator.Config, verify time.Duration) testIndex {
	t.Helper()
	cfg.APIKey = testKey
	h := emulator.New(cfg).Handler()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Protocols: &protocols, ReadHeaderTimeout: 30 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(withoutLSN{w}, r) })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + l.Addr().String()
	ix, err := Open(Config{Name: "idx", Host: url, APIKey: testKey, VerifyDeadline: verify})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	return testIndex{Index: ix, write: func(ns string) *pinecone.IndexConnection {
		return sdktest.GoIndex(t, url, testKey, ns, nil)
	}}
}

func TestLayer_WithoutLSNHeadersAbsenceRestsOnPolling(t *testing.T) {
	ti := startIndexWithoutLSN(t, emulator.Config{DeleteDelay: 700 * time.Millisecond}, time.Minute)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[0]
	ctx := sdktest.Context(t)
	began := time.Now()
	_, err := l.Delete(ctx, "alice", aliceLedger, func([]string) error { return nil })
	require.NoError(t, err)
	a, err := l.Residual(ctx, "alice", aliceLedger)
	require.NoError(t, err)
	assert.Zero(t, a.Residual)
	assert.GreaterOrEqual(t, time.Since(began), 700*time.Millisecond)
	assert.Contains(t, a.Method, "the index sent no x-pinecone-max-indexed-lsn header, so absence rests on polling alone")
	assert.NotRegexp(t, `absent at attempt 1,`, a.Method)
}

// Without LSN headers, records still found may be lagging deletes: the
// layer polls until the deadline before reporting them.
func TestLayer_WithoutLSNHeadersRecordsFoundArePolledUntilTheDeadline(t *testing.T) {
	ti := startIndexWithoutLSN(t, emulator.Config{}, 500*time.Millisecond)
	aliceAndBob(t, ti)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}})[0]
	a, err := l.Residual(sdktest.Context(t), "alice", aliceLedger)
	require.NoError(t, err)
	assert.EqualValues(t, 2, a.Residual)
	assert.NotContains(t, a.Method, "still present at attempt 1,")
}
