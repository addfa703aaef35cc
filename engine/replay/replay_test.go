package replay

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

// fakeTable is one table, both as forget deletes from it (Layer) and as
// reconcile reads it (Scanner): record id → the subject it names ("" for
// none).
type fakeTable struct {
	mu      sync.Mutex
	records map[string]string
	cleaned int
}

func (f *fakeTable) Store() ledger.Store { return ledger.StorePostgres }
func (f *fakeTable) Name() string        { return "public.docs" }

// matching is what the forget's two queries select: rows naming subject,
// and rows of the ledger's ids that name nobody.
func (f *fakeTable) matching(subject string, ids []string) []string {
	var out []string
	for id, s := range f.records {
		if s == subject || (s == "" && contains(ids, id)) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (f *fakeTable) Matching(_ context.Context, subject string, ids []string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matching(subject, ids), nil
}

func (f *fakeTable) Delete(_ context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	gone := f.matching(subject, ids)
	if err := beforeCommit(gone); err != nil {
		return nil, err
	}
	for _, id := range gone {
		delete(f.records, id)
	}
	return gone, nil
}

func (f *fakeTable) Residual(_ context.Context, subject string, ids []string) (connector.Absence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connector.Absence{Residual: int64(len(f.matching(subject, ids))), Method: "fake count"}, nil
}

func (f *fakeTable) Cleanup(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleaned++
	return nil
}

func (f *fakeTable) NearMisses(context.Context, string, []string) (int64, error) { return 0, nil }

func (f *fakeTable) Scan(_ context.Context, fn func([]connector.Record) error) error {
	f.mu.Lock()
	var batch []connector.Record
	for id, s := range f.records {
		r := connector.Record{Table: f.Name(), ID: id}
		if s != "" {
			r.Subjects = []string{s}
		}
		batch = append(batch, r)
	}
	f.mu.Unlock()
	return fn(batch)
}

func (f *fakeTable) ScanMethod() string { return "fake scan" }

func (f *fakeTable) put(id, subject string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records[id] = subject
}

func (f *fakeTable) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.records {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// forgotten sets up alice's and bob's records, forgets alice and returns
// the table, the rig and the request id.
func forgotten(t *testing.T) (*fakeTable, enginetest.Rig, string) {
	t.Helper()
	table := &fakeTable{records: map[string]string{"a1": "alice", "a2": "alice", "b1": "bob"}}
	rig := enginetest.New(t, time.Hour, table)
	for id, s := range table.records {
		rig.Record(t, s, ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: id})
	}
	req := rig.Forget(t, "alice")
	st, err := rig.Engine.Status(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	require.Equal(t, []string{"b1"}, table.ids())
	return table, rig, req
}

func config(rig enginetest.Rig, table *fakeTable) Config {
	return Config{Ledger: rig.Ledger, Hasher: rig.Hasher, Scanners: []connector.Scanner{table}, Layers: []connector.Layer{table},
		Certifier: rig.Certifier, Now: rig.Now}
}

func TestReplay_DeletesWhatARestoreBroughtBackAndLogsTheForget(t *testing.T) {
	table, rig, req := forgotten(t)
	// The restore: alice's rows are back, one of them now without its
	// subject (found through the ledger's id), beside one the ledger never
	// saw (found by its subject).
	table.put("a1", "alice")
	table.put("a2", "")
	table.put("a9", "alice")

	res, err := Run(context.Background(), config(rig, table))
	require.NoError(t, err)
	assert.Equal(t, []string{"b1"}, table.ids(), "alice's records are gone again, bob's kept")
	require.Len(t, res.Requests, 1)
	q := res.Requests[0]
	assert.Equal(t, req, q.RequestID)
	require.Len(t, q.Layers, 1)
	assert.Equal(t, int64(2), q.Layers[0].Found, "the records naming alice")
	assert.Equal(t, int64(3), q.Layers[0].Deleted, "and the one of her ledger ids that names nobody now")
	assert.Equal(t, int64(0), q.Layers[0].Residual)
	assert.True(t, res.Clean())
	assert.Equal(t, 2, table.cleaned, "cleanup ran after the forget and after the replay")

	r, err := certificate.VerifyReport(q.Report, rig.Keys)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReplayed, r.Kind)
	assert.Equal(t, req, r.RunID)
	assert.Equal(t, int64(3), r.Layers[0].Done)
	leaf, err := rig.Log.Record(context.Background(), q.LogIndex)
	require.NoError(t, err)
	e, err := certificate.ParseEvent(leaf)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReplayed, e.Event)
	assert.Equal(t, req, e.RequestID, "the event names the original request")
}

func TestReplay_NothingCameBackIsLoggedWithZeroCounts(t *testing.T) {
	table, rig, req := forgotten(t)
	res, err := Run(context.Background(), config(rig, table))
	require.NoError(t, err)
	require.Len(t, res.Requests, 1)
	q := res.Requests[0]
	assert.Equal(t, req, q.RequestID)
	assert.Equal(t, int64(0), q.Found())
	assert.Contains(t, q.Layers[0].Method, "none")
	r, err := certificate.VerifyReport(q.Report, rig.Keys)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Layers[0].Found)
	assert.Equal(t, []string{"b1"}, table.ids())
}

func TestReplay_DryRunCountsAndChangesNothing(t *testing.T) {
	table, rig, _ := forgotten(t)
	table.put("a1", "alice")
	size, err := rig.Log.Size(context.Background())
	require.NoError(t, err)
	cfg := config(rig, table)
	cfg.DryRun, cfg.Certifier = true, nil
	res, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Requests[0].Found())
	assert.False(t, res.Clean(), "a dry run that found records is not clean")
	assert.Nil(t, res.Requests[0].Report)
	assert.Equal(t, []string{"a1", "b1"}, table.ids())
	after, err := rig.Log.Size(context.Background())
	require.NoError(t, err)
	assert.Equal(t, size, after, "nothing logged")
}

func TestReplay_LiftedSubjectIsNotReplayed(t *testing.T) {
	table, rig, _ := forgotten(t)
	lifted, err := rig.Engine.Lift(context.Background(), "alice")
	require.NoError(t, err)
	require.True(t, lifted)
	table.put("a1", "alice")
	res, err := Run(context.Background(), config(rig, table))
	require.NoError(t, err)
	assert.Empty(t, res.Requests)
	assert.Equal(t, []string{"a1", "b1"}, table.ids(), "alice may have written again after the lift")
}

func TestReplay_WithoutCertifierRefusesToDelete(t *testing.T) {
	table, rig, _ := forgotten(t)
	cfg := config(rig, table)
	cfg.Certifier = nil
	_, err := Run(context.Background(), cfg)
	require.ErrorContains(t, err, "forget.signing_key")
}
