package pcwing

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// lateSink is forget's engine as the core sees it: it records what it is
// handed.
type lateSink struct {
	mu     sync.Mutex
	handed []string // "store table subject"
}

func (s *lateSink) DeleteLateWrite(_ context.Context, store ledger.Store, table, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handed = append(s.handed, string(store)+" "+table+" "+subject)
	return nil
}

// backstopCore is a capture core over a SQLite ledger in which subject
// "alice" was forgotten, deleting late writes through sink.
func backstopCore(t *testing.T, sink *lateSink) (*capture.Capture, *ledger.SQLite, *ledger.Hasher) {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	h, err := ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	tombs := capture.NewTombstones()
	tombs.Set(h.Hash("alice"), true)
	core := capture.New(capture.Config{Ledger: l, Observer: l, Holder: l, Hasher: h, Tombstones: tombs, DeleteLateWrites: true})
	t.Cleanup(core.Close)
	core.OnLateWrite(sink)
	return core, l, h
}

// upsertAround writes records straight to the emulator, as a batch job
// given the real index host would.
func upsertAround(t *testing.T, url, ns string, subjects map[string]string) {
	t.Helper()
	var vs []*pinecone.Vector
	for id, subject := range subjects {
		md, err := structpb.NewStruct(map[string]any{"user_id": subject})
		require.NoError(t, err)
		values := []float32{1, 0, 0}
		vs = append(vs, &pinecone.Vector{Id: id, Values: &values, Metadata: md})
	}
	_, err := sdktest.GoIndex(t, url, "local-key", ns, nil).UpsertVectors(sdktest.Context(t), vs)
	require.NoError(t, err)
}

// states returns the ledger's records about subject as "table id state".
func states(t *testing.T, l *ledger.SQLite, h *ledger.Hasher, subject string) []string {
	t.Helper()
	recs, err := l.BySubject(context.Background(), h.Hash(subject))
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, r.Table+" "+r.RecordID+" "+string(r.State))
	}
	return out
}

// A record written around the proxy is recorded by the scan; one about a
// forgotten subject is handed to the late-write sink under its layer and
// then marked deleted; a second scan records again only what the ledger
// lacks.
func TestBackstop_RecordsWritesAroundTheProxyAndHandsLateWritesToTheSink(t *testing.T) {
	url := startEmulator(t, emulator.Config{APIKey: "local-key"})
	upsertAround(t, url, "tenant-a", map[string]string{"b1": "bob", "a1": "alice"})
	upsertAround(t, url, "other", map[string]string{"a2": "alice"})
	sink := &lateSink{}
	core, l, h := backstopCore(t, sink)
	cfg := parse(t, `pinecone:
  scan_interval: 1h
  indexes:
    - {name: local, host: "`+url+`", namespaces: [{namespace: tenant-a, subjects: [user_id]}, {namespace: "*", subjects: [user_id]}]}
`)
	w := New(cfg, core, nil)
	w.getenv = func(string) string { return "local-key" }
	t.Cleanup(w.Close)
	require.NoError(t, w.Prepare(context.Background()))
	require.NotNil(t, w.backstop, "scan_interval with a core and rules schedules the backstop")

	w.backstop.scan(sdktest.Context(t))
	assert.Equal(t, []string{"local/tenant-a b1 confirmed"}, states(t, l, h, "bob"), "written around the proxy, now in the ledger")
	assert.ElementsMatch(t, []string{"pinecone local/tenant-a alice", "pinecone local/* alice"}, sink.handed,
		"each layer's forgotten subject handed over under the layer's name, which the engine's layers bear")
	assert.ElementsMatch(t, []string{"local/tenant-a a1 deleted", "local/other a2 deleted"}, states(t, l, h, "alice"),
		"the engine took them: marked deleted, as no relay sees its deletes")

	m := map[string]float64{}
	w.Metrics(m)
	assert.Equal(t, 3.0, m["lethe_pinecone_backstop_records_recorded_total"])
	assert.Equal(t, 2.0, m["lethe_pinecone_backstop_late_writes_total"])

	again := &lateSink{}
	core.OnLateWrite(again)
	w.backstop.scan(sdktest.Context(t))
	w.Metrics(m)
	assert.Equal(t, 5.0, m["lethe_pinecone_backstop_records_recorded_total"],
		"bob's record is held: not recorded again; alice's are still in the index (this sink deletes nothing): recorded and handed over again")
	assert.Len(t, again.handed, 2)
	assert.Equal(t, 6.0, m["lethe_pinecone_backstop_records_scanned_total"])
}

// Without scan_interval, or without a capture core, Prepare schedules no
// scan and opens nothing.
func TestBackstop_OffByDefault(t *testing.T) {
	sink := &lateSink{}
	core, _, _ := backstopCore(t, sink)
	src := `pinecone:
  indexes: [{name: local, host: "http://127.0.0.1:1", namespaces: [{namespace: "*", subjects: [user_id]}]}]
`
	w := New(parse(t, src), core, nil)
	t.Cleanup(w.Close)
	require.NoError(t, w.Prepare(context.Background()))
	assert.Nil(t, w.backstop)
	relay := newWing(t, parse(t, "pinecone:\n  scan_interval: 1h\n"+src[len("pinecone:\n"):]), nil)
	require.NoError(t, relay.Prepare(context.Background()))
	assert.Nil(t, relay.backstop, "a pure relay records nothing")
}

// The pacer spaces requests at its rate and gives up when the context
// ends.
func TestPacer_ContextEndsTheWait(t *testing.T) {
	p := newPacer(0.001) // one request per 1000 s
	require.NoError(t, p.wait(context.Background()), "the first request goes at once")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, p.wait(ctx), context.Canceled, "the second waits 1000 s, unless the context ends")
}
