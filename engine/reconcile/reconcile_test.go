package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

// fakeScanner hands out its records in batches of two, or fails.
type fakeScanner struct {
	store   ledger.Store
	name    string
	records []connector.Record
	err     error
}

func (f fakeScanner) Store() ledger.Store { return f.store }
func (f fakeScanner) Name() string        { return f.name }
func (f fakeScanner) ScanMethod() string  { return "scan of " + f.name }
func (f fakeScanner) Scan(ctx context.Context, fn func([]connector.Record) error) error {
	if f.err != nil {
		return f.err
	}
	for i := 0; i < len(f.records); i += 2 {
		if err := fn(f.records[i:min(i+2, len(f.records))]); err != nil {
			return err
		}
	}
	return nil
}

func row(id string, subjects ...string) connector.Record {
	return connector.Record{Table: "public.docs", ID: id, Subjects: subjects}
}

func TestReconcile_CountsUnknownRecordsAndAdoptsOnlyTheMissingSubjects(t *testing.T) {
	te := enginetest.New(t, 0)
	ctx := context.Background()
	te.Record(t, "alice", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "1"})
	te.Record(t, "mallory", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "3"})
	te.Record(t, "dave", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "4"})
	docs := fakeScanner{store: ledger.StorePostgres, name: "public.docs", records: []connector.Record{
		row("1", "alice"),          // known
		row("2", "bob"),            // written before Lethe
		row("3", "carol"),          // the ledger has the record under another subject
		row("4", "dave", "erin"),   // one of two subjects known
		row("5", "frank", "frank"), // one subject, named twice
		row("6"),                   // names nobody (NULL)
		row("", "gina"),            // no id
		{Table: "public.docs", ID: "8", Unreadable: true}, // a subject the rule cannot read
		row("\xff\x00", "hank"),                           // an id the ledger cannot hold
		row("1", "alice"),                                 // known
	}}
	absent := fakeScanner{store: ledger.StorePostgres, name: "public.later", err: fmt.Errorf("no such table: %w", connector.ErrAbsent)}
	cfg := Config{Ledger: te.Ledger, Hasher: te.Hasher, Scanners: []connector.Scanner{docs, absent}}

	want := []Count{
		{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 10, Known: 2, Unknown: 4, Unreadable: 4, Method: "scan of public.docs"},
		{Store: ledger.StorePostgres, Table: "public.later", Absent: true, Method: "scan of public.later"},
	}
	got, err := Run(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = Run(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, want, got, "without Adopt the ledger is unchanged")

	cfg.Adopt = true
	got, err = Run(ctx, cfg)
	require.NoError(t, err)
	want[0].Adopted = 4
	assert.Equal(t, want, got)
	for subject, ids := range map[string][]string{"bob": {"2"}, "carol": {"3"}, "erin": {"4"}, "frank": {"5"}} {
		recs, err := te.Ledger.BySubject(ctx, te.Hasher.Hash(subject))
		require.NoError(t, err)
		require.Len(t, recs, len(ids), subject)
		assert.Equal(t, ids[0], recs[0].RecordID)
		assert.Equal(t, ledger.StateConfirmed, recs[0].State)
		assert.Zero(t, recs[0].Intent, "a fact, as the WAL follower records one")
	}
	recs, err := te.Ledger.BySubject(ctx, te.Hasher.Hash("mallory"))
	require.NoError(t, err)
	assert.Len(t, recs, 1, "adoption adds, it never removes the proxy's tag")
	recs, err = te.Ledger.BySubject(ctx, te.Hasher.Hash("gina"))
	require.NoError(t, err)
	assert.Empty(t, recs, "a record without an id is not adopted")

	got, err = Run(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, []Count{
		{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 10, Known: 6, Unreadable: 4, Method: "scan of public.docs"},
		{Store: ledger.StorePostgres, Table: "public.later", Absent: true, Method: "scan of public.later"},
	}, got, "adopting twice adopts nothing the second time")
}

// A scanner of several namespaces is counted per namespace, as the ledger
// names its records; one that read nothing is counted under its own name.
func TestReconcile_CountsPerTableTheRecordsName(t *testing.T) {
	te := enginetest.New(t, 0)
	any := fakeScanner{store: ledger.StorePinecone, name: "idx/*", records: []connector.Record{
		{Table: "idx/a", ID: "v1", Subjects: []string{"alice"}},
		{Table: "idx/b", ID: "v1", Subjects: []string{"alice"}},
		{Table: "idx/a", ID: "v2", Subjects: []string{"bob"}},
	}}
	empty := fakeScanner{store: ledger.StorePinecone, name: "idx/empty"}
	got, err := Run(context.Background(), Config{Ledger: te.Ledger, Hasher: te.Hasher, Scanners: []connector.Scanner{any, empty}, Adopt: true})
	require.NoError(t, err)
	assert.Equal(t, []Count{
		{Store: ledger.StorePinecone, Table: "idx/a", Scanned: 2, Unknown: 2, Adopted: 2, Method: "scan of idx/*"},
		{Store: ledger.StorePinecone, Table: "idx/b", Scanned: 1, Unknown: 1, Adopted: 1, Method: "scan of idx/*"},
		{Store: ledger.StorePinecone, Table: "idx/empty", Method: "scan of idx/empty"},
	}, got)
	recs, err := te.Ledger.BySubject(context.Background(), te.Hasher.Hash("alice"))
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, []string{"idx/a", "idx/b"}, []string{recs[0].Table, recs[1].Table})
}

// A record naming a subject already forgotten is counted apart, with the
// request that forgot it, and never adopted: the ledger keeps no new fact
// about a forgotten subject.
func TestReconcile_RecordsOfForgottenSubjectsAreCountedNotAdopted(t *testing.T) {
	te := enginetest.New(t, 0)
	ctx := context.Background()
	request := te.Forget(t, "zoe")
	docs := fakeScanner{store: ledger.StorePostgres, name: "public.docs", records: []connector.Record{
		row("1", "zoe"), row("2", "bob", "zoe"), row("3", "bob"),
	}}
	cfg := Config{Ledger: te.Ledger, Hasher: te.Hasher, Scanners: []connector.Scanner{docs}, Adopt: true}
	got, err := Run(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, []Count{{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 3, Unknown: 1, Forgotten: 2,
		Adopted: 1, ForgottenBy: []string{request}, Method: "scan of public.docs"}}, got)
	recs, err := te.Ledger.BySubject(ctx, te.Hasher.Hash("zoe"))
	require.NoError(t, err)
	assert.Empty(t, recs)
	recs, err = te.Ledger.BySubject(ctx, te.Hasher.Hash("bob"))
	require.NoError(t, err)
	require.Len(t, recs, 1, "only the record about bob alone")
	assert.Equal(t, "3", recs[0].RecordID)

	got, err = Run(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(2), got[0].Forgotten, "found again until they are deleted")
	assert.Equal(t, int64(1), got[0].Known)
}

// failingHolder is a ledger that cannot answer.
type failingHolder struct{ Ledger }

func (failingHolder) Holds(context.Context, []ledger.Entry) ([]bool, error) {
	return nil, ledger.ErrUnavailable
}

func TestReconcile_StopsAtTheFirstError(t *testing.T) {
	te := enginetest.New(t, 0)
	docs := fakeScanner{store: ledger.StorePostgres, name: "public.docs", records: []connector.Record{row("1", "alice")}}
	_, err := Run(context.Background(), Config{Ledger: failingHolder{te.Ledger}, Hasher: te.Hasher, Scanners: []connector.Scanner{docs}})
	assert.ErrorIs(t, err, ledger.ErrUnavailable)
	broken := fakeScanner{store: ledger.StorePostgres, name: "public.docs", err: errors.New("connection reset")}
	_, err = Run(context.Background(), Config{Ledger: te.Ledger, Hasher: te.Hasher, Scanners: []connector.Scanner{broken}})
	assert.ErrorContains(t, err, "reconcile public.docs: connection reset")
}

// The report of an adoption carries its counts per table, verifies, and
// names no record or subject.
func TestReconcileReport_SignedAndLogged(t *testing.T) {
	te := enginetest.New(t, 0)
	counts := []Count{{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 9, Known: 2, Unknown: 4, Adopted: 4, Method: "scan"}}
	id := engine.NewRunID("reconcile", te.Now())
	signed, err := te.Certifier.LogReport(context.Background(), Report(id, te.Now(), counts))
	require.NoError(t, err)
	r, err := certificate.VerifyReport(signed, te.Keys)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReconcileAdopted, r.Kind)
	assert.Equal(t, id, r.RunID)
	assert.Equal(t, []certificate.ReportLayer{{Store: "postgres", Table: "public.docs", Found: 4, Done: 4, Method: "scan"}}, r.Layers)
}

// Reconcile signs and logs the report of an adoption under a fresh
// reconcile run id; with nothing adopted it signs nothing, and adopting
// without a certifier is refused before anything is read.
func TestReconcile_SignsAndLogsAnAdoption(t *testing.T) {
	te := enginetest.New(t, 0)
	docs := fakeScanner{store: ledger.StorePostgres, name: "public.docs", records: []connector.Record{
		{Table: "public.docs", ID: "1", Subjects: []string{"alice"}},
		{Table: "public.docs", ID: "2", Subjects: []string{"bob"}},
	}}
	cfg := Config{Ledger: te.Ledger, Hasher: te.Hasher, Scanners: []connector.Scanner{docs}, Adopt: true, Now: te.Now}
	_, _, err := Reconcile(context.Background(), cfg)
	require.ErrorContains(t, err, "needs a Certifier")
	cfg.Certifier = te.Certifier
	out, signed, err := Reconcile(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.Adopted)
	assert.True(t, strings.HasPrefix(out.RunID, "reconcile-"), out.RunID)
	r, err := certificate.VerifyReport(signed, te.Keys)
	require.NoError(t, err)
	assert.Equal(t, out.RunID, r.RunID)
	assert.Equal(t, []certificate.ReportLayer{{Store: "postgres", Table: "public.docs", Found: 2, Done: 2, Method: docs.ScanMethod()}}, r.Layers)

	out, signed, err = Reconcile(context.Background(), cfg)
	require.NoError(t, err)
	assert.Nil(t, signed, "a second run finds them known: nothing to report")
	assert.Empty(t, out.RunID)
	assert.True(t, out.Clean())
}
