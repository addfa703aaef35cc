package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// physicalFake is a fakeLayer that scans its pages: it records the order
// of the engine's calls and which subject Physical was given.
type physicalFake struct {
	*fakeLayer
	calls    []string
	subjects []string
}

func (p *physicalFake) Cleanup(context.Context) error {
	p.calls = append(p.calls, "cleanup")
	return nil
}

func (p *physicalFake) Physical(_ context.Context, subject string) *connector.Physical {
	p.calls = append(p.calls, "physical")
	p.subjects = append(p.subjects, subject)
	return &connector.Physical{Status: connector.PhysicalScanned, Method: "fake pages", At: time.Unix(0, 0).UTC(),
		Relations: []connector.RelationPages{{Relation: "docs", Kind: "heap", Pages: 4, Scanned: 4, Holding: 1, HoldingSubject: 1, Coverage: "all"}}}
}

// TestForget_PhysicalAfterCleanupInStatus: a layer that scans its pages
// is asked once, after its cleanup, with the subject it deleted, and the
// request's status carries what it found.
func TestForget_PhysicalAfterCleanupInStatus(t *testing.T) {
	layer := &physicalFake{fakeLayer: &fakeLayer{name: "ns", present: []string{"a", "b"}}}
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	st, err := te.Status(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	require.Equal(t, []string{"cleanup", "physical"}, layer.calls)
	require.Equal(t, []string{"alice"}, layer.subjects)
	require.Len(t, st.Layers, 1)
	require.NotNil(t, st.Layers[0].Physical)
	require.Equal(t, int64(1), st.Layers[0].Physical.Holding())
	require.Equal(t, connector.PhysicalScanned, st.Layers[0].Physical.Status)
}

// payloadOf reads the signed payload of a certificate.
func payloadOf(t *testing.T, cert []byte) (certificate.Payload, string) {
	t.Helper()
	e, err := certificate.Parse(cert)
	require.NoError(t, err)
	var p certificate.Payload
	require.NoError(t, json.Unmarshal(e.Payload, &p))
	return p, string(e.Payload)
}

// TestForget_PhysicalReachesAV2Certificate: a forget over a layer that
// scans its pages issues a lethe.certificate/v2 whose layer carries the
// scan's counts, whose other layer says not_scanned, whose claim says
// what the scan found, and which verifies valid with its physical line.
func TestForget_PhysicalReachesAV2Certificate(t *testing.T) {
	ctx := context.Background()
	scanned := &physicalFake{fakeLayer: &fakeLayer{name: "ns", present: []string{"a", "b"}}}
	other := &fakeLayer{name: "other", present: []string{"c"}}
	te := newTestEngine(t, time.Hour, scanned, other)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"},
		ledger.Entry{Store: ledger.StorePinecone, Table: "other", RecordID: "c"})
	id := te.forget(t, "alice")
	cert, err := te.Certificate(ctx, id)
	require.NoError(t, err)

	p, raw := payloadOf(t, cert)
	require.Equal(t, certificate.SchemaV2, p.Schema)
	require.Len(t, p.Layers, 2)
	got := p.Layers[0].Physical
	require.NotNil(t, got)
	require.Equal(t, certificate.PhysicalScanned, got.Status)
	require.Equal(t, "fake pages", got.Method)
	require.Equal(t, []certificate.RelationPages{{Relation: "docs", Kind: "heap", Pages: 4, Scanned: 4, Holding: 1, HoldingSubject: 1, Coverage: "all"}}, got.Relations)
	require.Equal(t, certificate.PhysicalNotScanned, p.Layers[1].Physical.Status)
	require.Contains(t, p.Claim.Statement, "A scan of all 4 pages of the table, TOAST table and indexes of pinecone ns at 1970-01-01T00:00:00Z found bytes of the deleted records still in 1 of them "+
		"(dead tuples, freed page space or index entries that no step removed; its physical method names the steps that ran)")
	require.Contains(t, p.Claim.Statement, "not_scanned were not looked at")
	require.NotContains(t, raw, "alice", "the subject is never in a certificate")
	// A resumed request signs its journaled payload again: a v2 payload
	// must read back to the same bytes.
	_, err = te.cfg.Certifier.resign([]byte(raw))
	require.NoError(t, err)

	v := te.Verify(cert)
	require.Equal(t, string(certificate.VerdictValid), v.Verdict, v.Reason)
	require.Equal(t, "pinecone ns: 1 of 4 pages scanned still hold the bytes; pinecone other: not scanned", v.Physical)
}

// TestForget_WithoutPhysicalTheCertificateStaysV1: no layer scans its
// pages, so the certificate is v1 with no trace of a physical section.
func TestForget_WithoutPhysicalTheCertificateStaysV1(t *testing.T) {
	ctx := context.Background()
	te := newTestEngine(t, time.Hour, &fakeLayer{name: "ns", present: []string{"a"}})
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	cert, err := te.Certificate(ctx, te.forget(t, "alice"))
	require.NoError(t, err)
	p, raw := payloadOf(t, cert)
	require.Equal(t, certificate.SchemaV1, p.Schema)
	require.NotContains(t, raw, "physical")
	require.Equal(t, claimStatement, p.Claim.Statement)
	v := te.Verify(cert)
	require.Equal(t, string(certificate.VerdictValid), v.Verdict, v.Reason)
	require.Empty(t, v.Physical)
}
