package engine

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// fakeLayer is a store whose deletes become visible late: after a delete,
// its first lingers verifications still find the deleted records.
type fakeLayer struct {
	name    string
	holds   func(table string) bool // nil: not Scoped
	lingers int

	mu        sync.Mutex
	present   []string   // the subject's records in the store
	deleted   []string   // deleted but still visible
	verified  int        // Residual calls
	events    *[]string  // "residual" per Residual call, when set
	ledgerIDs [][]string // ids the engine passed to Matching
	journaled []string   // ids beforeCommit was given
}

func (f *fakeLayer) Store() ledger.Store { return ledger.StorePinecone }
func (f *fakeLayer) Name() string        { return f.name }

func (f *fakeLayer) Matching(_ context.Context, _ string, ids []string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	got := slices.Clone(ids)
	slices.Sort(got)
	f.ledgerIDs = append(f.ledgerIDs, got)
	return append(slices.Clone(f.present), f.deleted...), nil
}

func (f *fakeLayer) Delete(_ context.Context, _ string, _ []string, beforeCommit func([]string) error) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.present
	if len(ids) == 0 {
		return nil, nil
	}
	if err := beforeCommit(ids); err != nil {
		return nil, err
	}
	f.journaled = append(f.journaled, ids...)
	f.deleted, f.present = append(f.deleted, ids...), nil
	return ids, nil
}

func (f *fakeLayer) Residual(context.Context, string, []string) (connector.Absence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verified++
	if f.events != nil {
		*f.events = append(*f.events, "residual")
	}
	if f.verified > f.lingers {
		f.deleted = nil
	}
	return connector.Absence{Residual: int64(len(f.present) + len(f.deleted)), Method: "fake", Queries: []string{"fetch ids=$ids"}}, nil
}

func (f *fakeLayer) Cleanup(context.Context) error { return nil }

func (f *fakeLayer) verifications() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.verified
}

// scopedFake is a fakeLayer that also stands for other ledger tables.
type scopedFake struct{ *fakeLayer }

func (s scopedFake) Holds(table string) bool { return s.holds(table) }

// testEngine wires layers to a fresh SQLite ledger and an in-memory log,
// with a clock the test moves.
type testEngine struct {
	*Engine
	ledger *ledger.SQLite
	hasher *ledger.Hasher
	now    *time.Time
	mu     *sync.Mutex
}

func newTestEngine(t *testing.T, deadline time.Duration, layers ...connector.Layer) testEngine {
	return newTestEngineWith(t, deadline, func(l Ledger) Ledger { return l }, layers...)
}

// newTestEngineWith lets wrap stand between the engine and its ledger.
func newTestEngineWith(t *testing.T, deadline time.Duration, wrap func(Ledger) Ledger, layers ...connector.Layer) testEngine {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	salt := make([]byte, 32)
	rand.Read(salt)
	h, err := ledger.NewHasher(salt)
	require.NoError(t, err)
	signer, err := certificate.GenerateKey(rand.Reader)
	require.NoError(t, err)
	const origin = "test.lethe/log"
	log, err := translog.New(&translog.MemoryStorage{}, signer.NoteSigner(origin), origin)
	require.NoError(t, err)
	keys, err := certificate.NewKeySet(origin, signer.TrustedKey(time.Unix(0, 0)))
	require.NoError(t, err)
	now, mu := time.Now(), &sync.Mutex{}
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e, err := New(Config{
		Ledger: wrap(l), Hasher: h, Layers: layers, Deadline: deadline, Now: clock,
		Certifier: NewCertifier(CertifierConfig{Signer: signer, Keys: keys, Log: log, Tool: "engine test", Now: clock,
			RulesSHA256: strings.Repeat("0", 64)}),
	})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(); l.Close() })
	return testEngine{Engine: e, ledger: l, hasher: h, now: &now, mu: mu}
}

func (te testEngine) advance(d time.Duration) {
	te.mu.Lock()
	*te.now = te.now.Add(d)
	te.mu.Unlock()
}

// record puts confirmed ledger entries about subject.
func (te testEngine) record(t *testing.T, subject string, entries ...ledger.Entry) {
	t.Helper()
	ctx := context.Background()
	for i := range entries {
		entries[i].Subject = te.hasher.Hash(subject)
	}
	id, err := te.ledger.Intend(ctx, entries)
	require.NoError(t, err)
	require.NoError(t, te.ledger.Confirm(ctx, id))
}

// forget previews and confirms a forget of subject, acknowledging a
// preview that found nothing, and waits for its first run to end.
func (te testEngine) forget(t *testing.T, subject string) string {
	t.Helper()
	ctx := context.Background()
	p, err := te.Preview(ctx, subject)
	require.NoError(t, err)
	r, err := te.Forget(ctx, subject, p.Token, ForgetOptions{NothingFound: p.NothingFound})
	require.NoError(t, err)
	te.Wait()
	return r.RequestID
}

func (te testEngine) tombstoned(t *testing.T, subject string) bool {
	ts, err := te.ledger.Tombstones(context.Background())
	require.NoError(t, err)
	return slices.ContainsFunc(ts, func(x ledger.Tombstone) bool { return x.Subject == te.hasher.Hash(subject) })
}

func TestForget_LayerNotYetAbsentLeavesTheRequestOpenUntilAResumeVerifiesIt(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1", "v2"}, lingers: 4}
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "v1"})

	id := te.forget(t, "alice")
	require.Equal(t, 3, layer.verifications(), "the default Retries")
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetReceived, st.Status, "left open, neither failed nor certified")
	require.Equal(t, []LayerStatus{{Store: "pinecone", Table: "idx/ns", Deleted: 2, Residual: 2, Unverified: true}}, st.Layers)
	_, err = te.Certificate(ctx, id)
	require.ErrorIs(t, err, ErrNotCompleted)
	require.True(t, te.tombstoned(t, "alice"), "the subject stays tombstoned while the request is open")

	require.NoError(t, te.Resume(ctx))
	te.Wait()
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status, st.Error)
	require.Equal(t, []LayerStatus{{Store: "pinecone", Table: "idx/ns", Deleted: 2, Done: true}}, st.Layers)
	require.Equal(t, 5, layer.verifications(), "absent at the second verification of the resumed run")
	cert, err := te.Certificate(ctx, id)
	require.NoError(t, err)
	require.Equal(t, string(certificate.VerdictValid), te.Verify(cert).Verdict, "a valid certificate: every layer verified absent")
}

func TestForget_LayerNotAbsentByTheDeadlineFailsTheRequest(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1"}, lingers: 1 << 30}
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "v1"})

	id := te.forget(t, "alice")
	require.NoError(t, te.Resume(ctx)) // before the deadline: still open
	te.Wait()
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetReceived, st.Status)
	require.Equal(t, 6, layer.verifications())

	te.advance(2 * time.Hour)
	require.NoError(t, te.Resume(ctx))
	te.Wait()
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetFailed, st.Status)
	require.Contains(t, st.Error, "pinecone idx/ns still held 1 of the subject's records at the request's deadline")
	require.True(t, st.Layers[0].Unverified)
	_, err = te.Certificate(ctx, id)
	require.ErrorIs(t, err, ErrNotCompleted)
}

// A Scoped layer gets the ids of the ledger tables it holds that no
// layer names exactly, and forget marks them deleted in each table.
func TestForget_ScopedLayerGetsTheTablesNoLayerNames(t *testing.T) {
	ctx := context.Background()
	explicit := &fakeLayer{name: "idx/x", present: []string{"x1"}}
	anyNS := scopedFake{&fakeLayer{name: "idx/*", present: []string{"a1", "b1"},
		holds: func(table string) bool { return strings.HasPrefix(table, "idx/") }}}
	te := newTestEngine(t, time.Hour, explicit, anyNS)
	te.record(t, "alice",
		ledger.Entry{Store: ledger.StorePinecone, Table: "idx/x", RecordID: "x1"},
		ledger.Entry{Store: ledger.StorePinecone, Table: "idx/a", RecordID: "a1"},
		ledger.Entry{Store: ledger.StorePinecone, Table: "idx/b", RecordID: "b1"},
		ledger.Entry{Store: ledger.StorePinecone, Table: "other/a", RecordID: "o1"},
		ledger.Entry{Store: ledger.StorePostgres, Table: "idx/c", RecordID: "p1"})

	p, err := te.Preview(ctx, "alice")
	require.NoError(t, err)
	require.Equal(t, []LayerPreview{
		{Store: ledger.StorePinecone, Table: "idx/x", LedgerRecords: 1, Rows: 1},
		{Store: ledger.StorePinecone, Table: "idx/*", LedgerRecords: 2, Rows: 2},
	}, p.Layers)
	require.Equal(t, [][]string{{"x1"}}, explicit.ledgerIDs)
	require.Equal(t, [][]string{{"a1", "b1"}}, anyNS.ledgerIDs)

	id := te.forget(t, "alice")
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status, st.Error)
	recs, err := te.ledger.BySubject(ctx, te.hasher.Hash("alice"))
	require.NoError(t, err)
	states := map[string]ledger.State{}
	for _, r := range recs {
		states[r.Table+" "+r.RecordID] = r.State
	}
	require.Equal(t, map[string]ledger.State{
		"idx/x x1": ledger.StateDeleted, "idx/a a1": ledger.StateDeleted, "idx/b b1": ledger.StateDeleted,
		"other/a o1": ledger.StateConfirmed, "idx/c p1": ledger.StateConfirmed,
	}, states)
}

// leaseLog records each lease renewal among the layer's events.
type leaseLog struct {
	Ledger
	mu     *sync.Mutex
	events *[]string
}

func (l leaseLog) LeaseForget(ctx context.Context, id, owner string, d time.Duration) (bool, error) {
	l.mu.Lock()
	*l.events = append(*l.events, "lease")
	l.mu.Unlock()
	return l.Ledger.LeaseForget(ctx, id, owner, d)
}

// Attempts that wait for a store to show its deletes can outlast a lease:
// the lease is renewed between them.
func TestForget_RenewsTheLeaseBetweenAttempts(t *testing.T) {
	var events []string
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1"}, lingers: 2, events: &events}
	te := newTestEngineWith(t, time.Hour, func(l Ledger) Ledger { return leaseLog{Ledger: l, mu: &layer.mu, events: &events} }, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "v1"})
	te.forget(t, "alice")
	layer.mu.Lock()
	defer layer.mu.Unlock()
	require.Equal(t, []string{"lease", "residual", "lease", "residual", "lease", "residual", "lease"}, events)
}

// A record the ledger holds twice (the WAL follower's fact beside the
// proxy's pending intent, a pending rewrite of a confirmed record) is one
// record to delete.
func TestPreview_CountsEachRecordOnce(t *testing.T) {
	ctx := context.Background()
	docs := &fakeLayer{name: "public.docs", present: []string{"d1", "d2"}}
	te := newTestEngine(t, time.Hour, docs)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "public.docs", RecordID: "d1"})
	_, err := te.ledger.Intend(ctx, []ledger.Entry{{Store: ledger.StorePinecone, Table: "public.docs", RecordID: "d1", Subject: te.hasher.Hash("alice")}})
	require.NoError(t, err)
	require.NoError(t, te.ledger.Observe(ctx, []ledger.Change{
		{Kind: ledger.ChangeWrite, Store: ledger.StorePinecone, Table: "public.docs", RecordID: "d1", Subjects: []ledger.SubjectHash{te.hasher.Hash("alice")}},
		{Kind: ledger.ChangeWrite, Store: ledger.StorePinecone, Table: "public.docs", RecordID: "d2", Subjects: []ledger.SubjectHash{te.hasher.Hash("alice")}},
	}))
	p, err := te.Preview(ctx, "alice")
	require.NoError(t, err)
	require.Equal(t, []LayerPreview{{Store: ledger.StorePinecone, Table: "public.docs", LedgerRecords: 2, Rows: 2}}, p.Layers)
}

func (f *fakeLayer) NearMisses(context.Context, string, []string) (int64, error) { return 0, nil }
