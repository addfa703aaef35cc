package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
)

func TestLogReport_TheSignedReportVerifiesAndItsEventIsInTheLog(t *testing.T) {
	te := newTestEngine(t, 0)
	ctx := context.Background()
	te.forget(t, "alice") // a log that already holds other events
	signed, err := te.cfg.Certifier.LogReport(ctx, certificate.Report{Kind: certificate.EventReconcileAdopted, RunID: "reconcile-1",
		Layers: []certificate.ReportLayer{{Store: "postgres", Table: "public.docs", Found: 2, Done: 2, Method: "scan"}}})
	require.NoError(t, err)
	r, err := certificate.VerifyReport(signed, te.cfg.Certifier.keys)
	require.NoError(t, err)
	assert.True(t, te.now.Equal(r.At), "stamped with the engine's clock: %s", r.At)

	size, err := te.cfg.Certifier.log.Size(ctx)
	require.NoError(t, err)
	last, err := te.cfg.Certifier.log.Record(ctx, size-1)
	require.NoError(t, err)
	e, err := certificate.ParseEvent(last)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReconcileAdopted, e.Event)
	assert.Equal(t, "reconcile-1", e.RequestID)
}
