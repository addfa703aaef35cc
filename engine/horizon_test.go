package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// horizonFake states a fixed horizon for two stores and counts its calls.
type horizonFake struct {
	calls   int
	deleted []time.Time
}

func (f *horizonFake) horizon(_ context.Context, deleted time.Time) []connector.Horizon {
	f.calls++
	f.deleted = append(f.deleted, deleted)
	return []connector.Horizon{
		{Store: ledger.StorePostgres, Copy: "pg_wal", Status: connector.HorizonConditional,
			Basis: "until replication slot lethe_app advances past LSN 0/3000148"},
		{Store: ledger.StorePinecone, Copy: "provider_purge", Status: connector.HorizonDated, Until: deleted.Add(90 * 24 * time.Hour),
			Basis: "Pinecone purges deleted data within 90 days"},
		{Store: ledger.StorePinecone, Copy: "backups", Status: connector.HorizonUnknown,
			Basis: "not declared: set pinecone.indexes[].retention.backups"},
	}
}

// TestForget_HorizonReachesAV3Certificate: with a horizon source, the
// certificate is v3: its horizon is what the source said for the stores
// in scope (a store without a layer is left out), every layer has a
// physical section, the claim states each entry and excludes no longer
// name the WAL, and it verifies valid with its horizon line. The status
// lists the open entries; once the dated one has passed, only the
// others.
func TestForget_HorizonReachesAV3Certificate(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "ns", present: []string{"a"}}
	te := newTestEngine(t, time.Hour, layer)
	src := &horizonFake{}
	te.Engine.cfg.Horizons = []connector.HorizonFunc{src.horizon}
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	cert, err := te.Certificate(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, src.calls)

	p, raw := payloadOf(t, cert)
	require.Equal(t, certificate.SchemaV3, p.Schema)
	require.Len(t, p.Horizon, 2, "the postgres entry has no layer in scope: %s", raw)
	require.Equal(t, certificate.Horizon{Store: "pinecone", Copy: "provider_purge", Status: "dated",
		Until: certificate.HorizonAt(src.deleted[0].Add(90 * 24 * time.Hour)), Basis: "Pinecone purges deleted data within 90 days"}, p.Horizon[0])
	require.Equal(t, "unknown", p.Horizon[1].Status)
	require.Equal(t, certificate.PhysicalNotScanned, p.Layers[0].Physical.Status)
	require.Contains(t, p.Claim.Statement, "pinecone provider_purge until "+p.Horizon[0].Until)
	require.Contains(t, p.Claim.Statement, "pinecone backups unknown: not declared")
	require.Equal(t, certificate.HorizonExcludes(), p.Claim.Excludes)

	r := certificate.Verify(cert, te.Engine.cfg.Certifier.keys, te.now.Add(time.Second))
	require.True(t, r.Valid(), "%s: %s", r.Verdict, r.Reason)
	require.Equal(t, "pinecone provider_purge: until "+p.Horizon[0].Until+"; pinecone backups: unknown", r.Horizon)

	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Len(t, st.OpenHorizons, 2)
	te.advance(91 * 24 * time.Hour)
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	require.Len(t, st.OpenHorizons, 1)
	require.Equal(t, "backups", st.OpenHorizons[0].Copy)
}

// TestForget_WithoutHorizonStaysV1: without a horizon source nothing
// changes: a v1 certificate that excludes the WAL, backups and replicas.
func TestForget_WithoutHorizonStaysV1(t *testing.T) {
	layer := &fakeLayer{name: "ns", present: []string{"a"}}
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	cert, err := te.Certificate(context.Background(), id)
	require.NoError(t, err)
	p, _ := payloadOf(t, cert)
	require.Equal(t, certificate.SchemaV1, p.Schema)
	require.True(t, strings.Contains(strings.Join(p.Claim.Excludes, ","), "write-ahead log"))
}
