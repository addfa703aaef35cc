package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// spelledLayer is a store that matches subjects as exact bytes, as the
// real ones do, and counts near misses among the spellings it is given,
// as the Pinecone connector does.
type spelledLayer struct {
	name string

	mu      sync.Mutex
	records map[string]string // record id → the subject it names, as stored
}

func (s *spelledLayer) Store() ledger.Store { return ledger.StorePostgres }
func (s *spelledLayer) Name() string        { return s.name }

func (s *spelledLayer) naming(subject string) []string {
	var out []string
	for id, stored := range s.records {
		if stored == subject {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func (s *spelledLayer) Matching(_ context.Context, subject string, _ []string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.naming(subject), nil
}

func (s *spelledLayer) Delete(_ context.Context, subject string, _ []string, beforeCommit func([]string) error) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.naming(subject)
	if len(ids) == 0 {
		return nil, nil
	}
	if err := beforeCommit(ids); err != nil {
		return nil, err
	}
	for _, id := range ids {
		delete(s.records, id)
	}
	return ids, nil
}

func (s *spelledLayer) Residual(_ context.Context, subject string, _ []string) (connector.Absence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return connector.Absence{Residual: int64(len(s.naming(subject))), Method: "fake", Queries: []string{"count subject=$1"}}, nil
}

func (s *spelledLayer) Cleanup(context.Context) error { return nil }

func (s *spelledLayer) NearMisses(_ context.Context, subject string, variants []string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, stored := range s.records {
		if stored != subject && slices.Contains(variants, stored) {
			n++
		}
	}
	return n, nil
}

func (s *spelledLayer) left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// bobsDocs is a layer holding two of bob@example.com's records and one of
// carol's, all three in the ledger.
func bobsDocs(t *testing.T) (testEngine, *spelledLayer) {
	docs := &spelledLayer{name: "public.docs", records: map[string]string{
		"d1": "bob@example.com", "d2": "bob@example.com", "d3": "carol@example.com"}}
	te := newTestEngine(t, time.Hour, docs)
	te.record(t, "bob@example.com",
		ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "d1"},
		ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "d2"})
	te.record(t, "carol@example.com", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "d3"})
	return te, docs
}

// mistypedBob are spellings of bob@example.com that forget, comparing
// bytes, does not find: case, surrounding white space, and
// both at once.
var mistypedBob = map[string]string{
	"case":           "Bob@Example.com",
	"trailing":       "bob@example.com ",
	"case and space": "  BOB@EXAMPLE.COM\t",
}

func TestPreview_OfAMistypedSubjectFindsNothingAndCountsNearMisses(t *testing.T) {
	ctx := context.Background()
	for name, typo := range mistypedBob {
		t.Run(name, func(t *testing.T) {
			te, _ := bobsDocs(t)
			p, err := te.Preview(ctx, typo)
			require.NoError(t, err)
			require.True(t, p.NothingFound)
			require.Equal(t, []LayerPreview{{Store: ledger.StorePostgres, Table: "public.docs",
				NearMisses: &NearMisses{LedgerRecords: 2, Records: 2}}}, p.Layers)
			require.Equal(t, &NearMisses{LedgerRecords: 2, Records: 2}, p.NearMisses)
			require.Contains(t, p.Warning, "No records of this subject were found in any layer")
			require.Contains(t, p.Warning, "2 ledger records and 2 store records name it in another spelling")
			require.Contains(t, p.Warning, "--nothing-found")
			require.NotContains(t, p.Warning, "bob", "counts only, never a spelling")
		})
	}
	t.Run("unicode form", func(t *testing.T) {
		nfc := norm.NFC.String("zoë@example.com")
		docs := &spelledLayer{name: "public.docs", records: map[string]string{"d1": nfc}}
		te := newTestEngine(t, time.Hour, docs)
		te.record(t, nfc, ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "d1"})
		p, err := te.Preview(ctx, norm.NFD.String(nfc))
		require.NoError(t, err)
		require.True(t, p.NothingFound)
		require.Equal(t, &NearMisses{LedgerRecords: 1, Records: 1}, p.NearMisses)
	})
}

func TestPreview_OfNobodyFindsNothingAndNoNearMisses(t *testing.T) {
	te, _ := bobsDocs(t)
	p, err := te.Preview(context.Background(), "dave@example.com")
	require.NoError(t, err)
	require.True(t, p.NothingFound)
	require.Equal(t, &NearMisses{}, p.NearMisses)
	require.Contains(t, p.Warning, "no record names it in another spelling either")
}

func TestForget_NothingFoundIsRefusedWithoutTheFlag(t *testing.T) {
	ctx := context.Background()
	te, docs := bobsDocs(t)
	p, err := te.Preview(ctx, "Bob@Example.com")
	require.NoError(t, err)
	_, err = te.Forget(ctx, "Bob@Example.com", p.Token)
	require.ErrorIs(t, err, ErrNothingFound)
	var nf *NothingFoundError
	require.True(t, errors.As(err, &nf))
	require.Equal(t, NearMisses{LedgerRecords: 2, Records: 2}, nf.NearMisses)
	require.Contains(t, err.Error(), "--nothing-found")
	require.Contains(t, err.Error(), "2 ledger records and 2 store records")
	require.NotContains(t, err.Error(), "bob")

	open, err := te.ledger.OpenForgets(ctx)
	require.NoError(t, err)
	require.Empty(t, open, "no request was opened")
	require.False(t, te.tombstoned(t, "Bob@Example.com"))
	require.Equal(t, 3, docs.left())

	// The refusal spent nothing: the same token confirms with the flag.
	_, err = te.Forget(ctx, "Bob@Example.com", p.Token, ForgetOptions{NothingFound: true})
	require.NoError(t, err)
}

func TestForget_NothingFoundWithTheFlagCertifiesThatNothingWasFound(t *testing.T) {
	ctx := context.Background()
	te, docs := bobsDocs(t)
	p, err := te.Preview(ctx, "bob@example.com ")
	require.NoError(t, err)
	r, err := te.Forget(ctx, "bob@example.com ", p.Token, ForgetOptions{NothingFound: true})
	require.NoError(t, err)
	te.Wait()
	payload := certifiedPayload(t, te, r.RequestID)
	require.Equal(t, nothingFoundStatement, payload.Claim.Statement)
	require.Contains(t, payload.Claim.Statement, "No records of the data subject identified by this certificate were found")
	require.Len(t, payload.Layers, 1)
	require.Zero(t, payload.Layers[0].Requested)
	require.Zero(t, payload.Layers[0].Deleted)
	require.True(t, payload.Layers[0].VerifiedAbsent)
	require.Zero(t, payload.DeletedIDs.Count)
	require.Equal(t, 3, docs.left(), "bob's records are untouched: the forget was of another spelling")
}

func TestForget_RecordsFoundKeepTheDeletionStatementAndRefuseTheNothingFoundFlag(t *testing.T) {
	ctx := context.Background()
	te, docs := bobsDocs(t)
	p, err := te.Preview(ctx, "bob@example.com")
	require.NoError(t, err)
	require.False(t, p.NothingFound)
	require.Nil(t, p.NearMisses, "near misses are counted only when nothing is found")
	require.Empty(t, p.Warning)
	require.Equal(t, []LayerPreview{{Store: ledger.StorePostgres, Table: "public.docs", LedgerRecords: 2, Rows: 2}}, p.Layers)

	_, err = te.Forget(ctx, "bob@example.com", p.Token, ForgetOptions{NothingFound: true})
	require.ErrorIs(t, err, ErrRecordsFound)

	r, err := te.Forget(ctx, "bob@example.com", p.Token)
	require.NoError(t, err)
	te.Wait()
	payload := certifiedPayload(t, te, r.RequestID)
	require.Equal(t, claimStatement, payload.Claim.Statement)
	require.EqualValues(t, 2, payload.Layers[0].Deleted)
	require.EqualValues(t, 2, payload.DeletedIDs.Count)
	require.Equal(t, 1, docs.left(), "carol's record stays")
}

func TestSpellings_AreTheOtherSpellingsEachOnce(t *testing.T) {
	got := spellings(" Zoë@Example.com")
	require.NotContains(t, got, " Zoë@Example.com", "the subject itself is not a near miss")
	for _, want := range []string{"zoë@example.com", " zoë@example.com", "ZOË@EXAMPLE.COM", norm.NFD.String("zoë@example.com"), "Zoë@Example.com"} {
		require.Contains(t, got, want)
	}
	require.Len(t, got, len(slices.Compact(slices.Sorted(slices.Values(got)))), "no spelling twice")
	require.Empty(t, spellings("42"), "a subject with no other spelling has none")
}

// certifiedPayload is the payload of request id's certificate, which must
// be completed and valid.
func certifiedPayload(t *testing.T, te testEngine, id string) certificate.Payload {
	t.Helper()
	st, err := te.Status(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status, st.Error)
	cert, err := te.Certificate(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, string(certificate.VerdictValid), te.Verify(cert).Verdict)
	env, err := certificate.Parse(cert)
	require.NoError(t, err)
	var p certificate.Payload
	require.NoError(t, json.Unmarshal(env.Payload, &p))
	return p
}
