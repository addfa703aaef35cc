package pcwing

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

const settleKey = "settle-key"

// readControl sits between the wing and the emulator and changes how the
// emulator answers reads by id (fetch, vectors and documents): held until
// released, failed, or, for every answer, without LSN headers.
type readControl struct {
	emulator http.Handler

	mu       sync.Mutex
	hold     chan struct{} // not nil: read answers wait until it is closed
	held     chan struct{} // receives once per read answer held
	fail     bool
	stripLSN bool
	requests int // every request the emulator was sent through c
}

func isFetch(path string) bool {
	return path == "/VectorService/Fetch" || path == "/vectors/fetch" || strings.HasSuffix(path, "/documents/fetch")
}

func (c *readControl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	hold, held, fail, strip := c.hold, c.held, c.fail, c.stripLSN
	c.requests++
	if !isFetch(r.URL.Path) {
		hold, fail = nil, false
	}
	c.mu.Unlock()
	if fail {
		if r.URL.Path == "/VectorService/Fetch" {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Grpc-Status", "14")
			w.Header().Set("Grpc-Message", "test: reads fail")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"code":14,"message":"test: reads fail","details":[]}`)
		return
	}
	// The emulator answers now, from the index as it is now; the answer
	// reaches the wing when hold is closed.
	rec := httptest.NewRecorder()
	c.emulator.ServeHTTP(rec, r)
	if hold != nil {
		held <- struct{}{}
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	res := rec.Result()
	for k, vs := range rec.Header() {
		if strings.HasPrefix(k, http.TrailerPrefix) || strip && strings.HasPrefix(strings.ToLower(k), "x-pinecone-") && strings.HasSuffix(strings.ToLower(k), "-lsn") {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(res.StatusCode)
	w.Write(rec.Body.Bytes())
	for k, vs := range res.Trailer {
		w.Header()[http.TrailerPrefix+k] = vs
	}
}

// holdReads makes read answers wait until the returned release is
// called; held receives once per read held.
func (c *readControl) holdReads() (held <-chan struct{}, release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold, c.held = make(chan struct{}), make(chan struct{}, 16)
	hold := c.hold
	return c.held, func() {
		c.mu.Lock()
		c.hold = nil
		c.mu.Unlock()
		close(hold)
	}
}

// count is how many requests reached the emulator through c.
func (c *readControl) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

func (c *readControl) set(fail, stripLSN bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail, c.stripLSN = fail, stripLSN
}

// serveH2C serves h over HTTP/1.1 and cleartext HTTP/2 until the test
// ends and returns its URL.
func serveH2C(t testing.TB, h http.Handler) string {
	t.Helper()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 30 * time.Second}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String()
}

// syncBuffer is a log sink safe for the wing's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// settleRig is a serving wing over a SQLite ledger, in front of an
// emulator (index "docs", namespaces naming their subject in user_id)
// reached through reads.
type settleRig struct {
	relay    string
	upstream string // the emulator, behind reads
	wing     *Wing
	ledger   *ledger.Handle
	hasher   *ledger.Hasher
	reads    *readControl
	log      *syncBuffer
	api      string
}

// newSettleRig starts the rig; confirmHold, when given, is the capture
// core's (1 ms otherwise).
func newSettleRig(t testing.TB, api string, em emulator.Config, confirmHold ...time.Duration) *settleRig {
	t.Helper()
	em.APIKey, em.IndexName = settleKey, "docs"
	r := &settleRig{reads: &readControl{emulator: emulator.New(em).Handler()}, log: &syncBuffer{}, api: api}
	upstream := serveH2C(t, r.reads)
	r.upstream = upstream
	// Opened as the command opens it: a *ledger.Handle.
	l, err := ledger.Open(context.Background(), ledger.Location{SQLite: filepath.Join(t.TempDir(), "ledger.db")}, ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	r.ledger = l
	r.hasher, err = ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	cfg := parse(t, `pinecone:
  listen: "127.0.0.1:0"
  verify_deadline: 2s
  scan_rate: 1000
  indexes:
    - {name: docs, host: "`+upstream+`", api: `+api+`, namespaces: [{namespace: "*", subjects: [user_id]}]}
`)
	hold := time.Millisecond
	if len(confirmHold) > 0 {
		hold = confirmHold[0]
	}
	core := capture.New(capture.Config{Rules: cfg.Compiled().Tables, Ledger: l, Hasher: r.hasher,
		Tombstones: capture.NewTombstones(), ConfirmHold: hold})
	t.Cleanup(core.Close)
	r.wing = New(cfg, core, slog.New(slog.NewTextHandler(r.log, nil)))
	r.wing.getenv = func(string) string { return settleKey }
	t.Cleanup(r.wing.Close)
	r.relay, _ = started(t, r.wing)
	return r
}

// send sends one REST request through the relay and requires success.
func (r *settleRig) send(t testing.TB, path, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.relay+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Api-Key", settleKey)
	req.Header.Set("Content-Type", "application/json")
	if r.api == "documents" {
		req.Header.Set("X-Pinecone-Api-Version", "2026-07")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, "%s: %s", path, resp.Status)
}

// upsert writes id about subject to namespace ns through the relay, in the
// rig's API.
func (r *settleRig) upsert(t *testing.T, ns, id, subject string) {
	t.Helper()
	if r.api == "documents" {
		r.send(t, "/namespaces/"+ns+"/documents/upsert", `{"documents":[{"_id":"`+id+`","user_id":"`+subject+`"}]}`)
		return
	}
	r.send(t, "/vectors/upsert", `{"namespace":"`+ns+`","vectors":[{"id":"`+id+`","values":[0.1,0.2],"metadata":{"user_id":"`+subject+`"}}]}`)
}

// deleteByFilter deletes subject's records of namespace ns by filter
// through the relay: over REST, or gRPC with go-pinecone.
func (r *settleRig) deleteByFilter(t testing.TB, ns, subject string, grpc bool) {
	t.Helper()
	switch {
	case grpc:
		filter, err := structpb.NewStruct(map[string]any{"user_id": map[string]any{"$eq": subject}})
		require.NoError(t, err)
		require.NoError(t, sdktest.GoIndex(t, r.relay, settleKey, ns, nil).DeleteVectorsByFilter(sdktest.Context(t), (*pinecone.MetadataFilter)(filter)))
	case r.api == "documents":
		r.send(t, "/namespaces/"+ns+"/documents/delete", `{"filter":{"user_id":{"$eq":"`+subject+`"}}}`)
	default:
		r.send(t, "/vectors/delete", `{"namespace":"`+ns+`","filter":{"user_id":{"$eq":"`+subject+`"}}}`)
	}
}

// records returns the ledger's records about subject as "table id state".
func (r *settleRig) records(t *testing.T, subject string) []string {
	t.Helper()
	recs, err := r.ledger.BySubject(context.Background(), r.hasher.Hash(subject))
	require.NoError(t, err)
	var out []string
	for _, rec := range recs {
		out = append(out, rec.Table+" "+rec.RecordID+" "+string(rec.State))
	}
	return sorted(out)
}

// eventually waits until the ledger's records about subject are want.
func (r *settleRig) eventually(t *testing.T, subject string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	require.Eventually(t, func() bool {
		got = r.records(t, subject)
		return slices.Equal(got, want)
	}, 30*time.Second, 10*time.Millisecond, "ledger records about %s: got %v, want %v", subject, &got, want)
}

// metric is one of the wing's metrics now.
func (r *settleRig) metric(name string) float64 {
	m := map[string]float64{}
	r.wing.Metrics(m)
	return m[name]
}

// writeTwoPeople writes alice's a1 and a2 and bob's b1 to namespace notes,
// alice's t1 to namespace team, and waits until they are confirmed.
func (r *settleRig) writeTwoPeople(t *testing.T) {
	t.Helper()
	r.upsert(t, "notes", "a1", "alice")
	r.upsert(t, "notes", "a2", "alice")
	r.upsert(t, "notes", "b1", "bob")
	r.upsert(t, "team", "t1", "alice")
	r.eventually(t, "alice", "docs/notes a1 confirmed", "docs/notes a2 confirmed", "docs/team t1 confirmed")
	r.eventually(t, "bob", "docs/notes b1 confirmed")
}

// A delete by filter through the proxy marks deleted the records it
// removed, once the index's reads have indexed past it (the emulator
// shows deletes late), and leaves the other person's records and other
// namespaces present: vectors over REST and gRPC, and documents.
func TestSettle_FilterDeleteMarksThatPersonsRecordsDeleted(t *testing.T) {
	for _, c := range []struct {
		name, api string
		grpc      bool
	}{
		{"vectors REST", "vectors", false},
		{"vectors gRPC", "vectors", true},
		{"documents", "documents", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newSettleRig(t, c.api, emulator.Config{DeleteDelay: 300 * time.Millisecond})
			r.writeTwoPeople(t)
			r.deleteByFilter(t, "notes", "alice", c.grpc)
			r.eventually(t, "alice", "docs/notes a1 deleted", "docs/notes a2 deleted", "docs/team t1 confirmed")
			r.eventually(t, "bob", "docs/notes b1 confirmed")
			require.Eventually(t, func() bool { return r.metric("lethe_pinecone_filter_delete_settles_total") == 1 }, 30*time.Second, 10*time.Millisecond)
			assert.Equal(t, 3.0, r.metric("lethe_pinecone_filter_delete_records_read_total"))
			assert.Equal(t, 2.0, r.metric("lethe_pinecone_filter_delete_records_marked_deleted_total"))
			assert.Equal(t, 1.0, r.metric("lethe_pinecone_filter_delete_records_left_present_total"))
			assert.Contains(t, r.log.String(), "ledger settled after a delete by filter")
		})
	}
}

// Records written just before the delete, whose confirmations the capture
// core still holds (capture.confirm_hold), are settled too: the settle
// starts once the confirmations queued before the delete are in the
// ledger.
func TestSettle_RecordsWrittenJustBeforeTheDeleteAreSettled(t *testing.T) {
	r := newSettleRig(t, "vectors", emulator.Config{}, time.Hour)
	r.upsert(t, "notes", "a1", "alice")
	r.upsert(t, "notes", "b1", "bob")
	require.Equal(t, []string{"docs/notes a1 pending"}, r.records(t, "alice"), "the confirmation is held")
	r.deleteByFilter(t, "notes", "alice", false)
	r.eventually(t, "alice", "docs/notes a1 deleted")
	r.eventually(t, "bob", "docs/notes b1 confirmed")
}

// A record written again through the proxy after the delete by filter is
// never marked deleted, even when the settle's read was answered before
// that write and so shows it absent.
func TestSettle_RecordWrittenAgainAfterTheDeleteStaysPresent(t *testing.T) {
	for _, c := range []struct {
		name, api string
		grpc      bool
	}{
		{"vectors REST", "vectors", false},
		{"vectors gRPC", "vectors", true},
		{"documents", "documents", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newSettleRig(t, c.api, emulator.Config{})
			r.writeTwoPeople(t)
			before := r.intentOf(t, "alice", "a1")
			held, release := r.reads.holdReads()
			r.deleteByFilter(t, "notes", "alice", c.grpc) // answered at once: the settle runs beside it
			<-held                                        // the settle's read is answered by the index: a1 and a2 absent
			r.upsert(t, "notes", "a1", "alice")
			require.Eventually(t, func() bool { return r.intentOf(t, "alice", "a1") > before }, 30*time.Second, 10*time.Millisecond,
				"the write again is confirmed")
			release()
			r.eventually(t, "alice", "docs/notes a1 confirmed", "docs/notes a2 deleted", "docs/team t1 confirmed")
			r.eventually(t, "bob", "docs/notes b1 confirmed")
			require.Eventually(t, func() bool { return r.metric("lethe_pinecone_filter_delete_settles_total") == 1 }, 30*time.Second, 10*time.Millisecond)
			assert.Equal(t, 1.0, r.metric("lethe_pinecone_filter_delete_records_marked_deleted_total"))
			assert.Equal(t, 2.0, r.metric("lethe_pinecone_filter_delete_records_left_present_total"), "b1 present, a1 written since")
		})
	}
}

// intentOf is the intent that last confirmed record id about subject.
func (r *settleRig) intentOf(t *testing.T, subject, id string) ledger.IntentID {
	t.Helper()
	recs, err := r.ledger.BySubject(context.Background(), r.hasher.Hash(subject))
	require.NoError(t, err)
	for _, rec := range recs {
		if rec.RecordID == id && rec.State == ledger.StateConfirmed {
			return rec.Intent
		}
	}
	return 0
}

// An index that answers the settle's reads with errors leaves the ledger
// as it was; the failure is logged without ids or subjects and counted,
// and the next delete by filter in the namespace settles it.
func TestSettle_ReadErrorsLeaveTheLedgerAndAreRetried(t *testing.T) {
	for _, api := range []string{"vectors", "documents"} {
		t.Run(api, func(t *testing.T) {
			r := newSettleRig(t, api, emulator.Config{})
			r.writeTwoPeople(t)
			r.reads.set(true, false)
			r.deleteByFilter(t, "notes", "alice", false)
			require.Eventually(t, func() bool { return r.metric("lethe_pinecone_filter_delete_settle_failures_total") == 1 }, 30*time.Second, 10*time.Millisecond)
			assert.Equal(t, []string{"docs/notes a1 confirmed", "docs/notes a2 confirmed", "docs/team t1 confirmed"}, r.records(t, "alice"))
			assert.Equal(t, 0.0, r.metric("lethe_pinecone_filter_delete_settles_total"))
			logged := r.log.String()
			assert.Contains(t, logged, "settling the ledger after a delete by filter failed")
			for _, secret := range []string{"alice", "bob", "a1", "a2", "b1"} {
				assert.NotContains(t, logged, secret, "the log names no subject and no record id")
			}

			r.reads.set(false, false)
			r.deleteByFilter(t, "notes", "nobody", false) // a later delete in the namespace retries at once
			r.eventually(t, "alice", "docs/notes a1 deleted", "docs/notes a2 deleted", "docs/team t1 confirmed")
			r.eventually(t, "bob", "docs/notes b1 confirmed")
		})
	}
}

// Without LSN headers, absence counts only once pinecone.verify_deadline
// (2 s here) has passed since the delete's answer: the emulator shows the
// delete's records for 1 s more, and a read before that would leave them
// present.
func TestSettle_WithoutLSNHeadersWaitsTheVerifyDeadline(t *testing.T) {
	r := newSettleRig(t, "vectors", emulator.Config{DeleteDelay: time.Second})
	r.reads.set(false, true)
	r.writeTwoPeople(t)
	r.deleteByFilter(t, "notes", "alice", false)
	r.eventually(t, "alice", "docs/notes a1 deleted", "docs/notes a2 deleted", "docs/team t1 confirmed")
	r.eventually(t, "bob", "docs/notes b1 confirmed")
}

// Close stops a settle waiting on the index and leaves the ledger as it
// was; the delete's answer never waited for the settle.
func TestSettle_StopsWithTheWing(t *testing.T) {
	r := newSettleRig(t, "vectors", emulator.Config{})
	r.writeTwoPeople(t)
	held, release := r.reads.holdReads()
	defer release()
	r.deleteByFilter(t, "notes", "alice", false)
	<-held
	r.wing.Close()
	assert.Equal(t, []string{"docs/notes a1 confirmed", "docs/notes a2 confirmed", "docs/team t1 confirmed"}, r.records(t, "alice"))
	assert.Equal(t, 0.0, r.metric("lethe_pinecone_filter_delete_settles_total"))
	assert.Equal(t, 0.0, r.metric("lethe_pinecone_filter_delete_settle_failures_total"), "stopping is not a failure")
}

// A settle reads at most its cap of the ledger's records, in id order,
// and says so; the records past it stay present.
func TestSettle_StopsAtItsCap(t *testing.T) {
	r := newSettleRig(t, "vectors", emulator.Config{})
	r.wing.settler.maxRecords = 1
	r.writeTwoPeople(t)
	r.deleteByFilter(t, "notes", "alice", false)
	r.eventually(t, "alice", "docs/notes a1 deleted", "docs/notes a2 confirmed", "docs/team t1 confirmed")
	require.Eventually(t, func() bool { return r.metric("lethe_pinecone_filter_delete_settles_capped_total") == 1 }, 30*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1.0, r.metric("lethe_pinecone_filter_delete_records_read_total"))
	assert.Contains(t, r.log.String(), "stopped at its cap")
}

// Deletes by filter in one namespace merge into one pending settle, with
// the latest time, the highest LSN, and LSNs trusted only if every
// delete carried one; another namespace has its own.
func TestSettler_MergesPendingDeletesPerNamespace(t *testing.T) {
	s := &settler{queued: map[string]*settleJob{}, wake: make(chan struct{}, 1)}
	t0 := time.Now()
	s.enqueue(pcaptureDelete("notes", t0, 7, true))
	s.enqueue(pcaptureDelete("notes", t0.Add(time.Second), 5, true))
	s.enqueue(pcaptureDelete("team", t0, 3, false))
	require.Len(t, s.queued, 2)
	notes := s.queued["docs/notes"]
	assert.Equal(t, t0.Add(time.Second), notes.since)
	assert.Equal(t, uint64(7), notes.lsn)
	assert.True(t, notes.hasLSN)
	s.enqueue(pcaptureDelete("notes", t0, 9, false))
	assert.Equal(t, t0.Add(time.Second), notes.since, "an earlier delete does not move the time back")
	assert.Equal(t, uint64(9), notes.lsn)
	assert.False(t, notes.hasLSN, "one delete without an LSN: absence rests on time")

	j, _ := s.next()
	require.NotNil(t, j)
	k, _ := s.next()
	require.NotNil(t, k)
	none, wait := s.next()
	assert.Nil(t, none)
	assert.Zero(t, wait, "nothing queued")
}

func pcaptureDelete(ns string, sent time.Time, lsn uint64, hasLSN bool) pcapture.FilterDelete {
	return pcapture.FilterDelete{Index: "docs", Namespace: ns, Table: "docs/" + ns, Since: sent, Answered: sent, RequestLSN: lsn, HasLSN: hasLSN}
}
