//go:build integration

package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// rescanLayer is a physical: report layer on table that re-scans every
// 10 minutes.
func rescanLayer(t *testing.T, store *pgstore.Store, table string) *pgstore.Layer {
	layer, err := pgstore.NewLayer(ctxT(t), store, pagesRule(table), false)
	require.NoError(t, err)
	layer.ReportPhysical(pgstore.DefaultPhysicalScan)
	layer.RemovePhysical(pgstore.PhysicalSteps{})
	layer.RescanPhysical(10 * time.Minute)
	return layer
}

// totalHolding is the pages the test's own scan found holding the bytes.
func totalHolding(found map[string]pagesFound) int64 {
	var n int64
	for _, f := range found {
		n += f.holding
	}
	return n
}

// TestPhysicalLater_RescanAfterVacuumLogsClean: a physical: report forget
// certifies the residue its scan found (as the test's own scan counts
// it); the operator then rewrites the table (VACUUM FULL, run by the
// test), and the next re-scan, 10 minutes later on the engine's clock,
// finds no page holding the bytes: status shows it beside the certified
// scan, and its forget.physical report verifies against the log.
func TestPhysicalLater_RescanAfterVacuumLogsClean(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "rescan-clean-gone-51c2", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "rescan-clean-kept-8e07", vectors: make([][]float32, 100)}
	scrubTable(t, direct, "rescan_clean", 64, gone, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, time.Hour, rescanLayer(t, store, "rescan_clean"))

	id := rig.Forget(t, gone.subject)
	st, err := rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	certified := st.Layers[0].Physical
	require.Equal(t, connector.PhysicalScanned, certified.Status)
	own := scanEveryPage(t, direct, "rescan_clean", diskRuns(gone.vectors), gone.subject)
	require.Positive(t, totalHolding(own), "a DELETE leaves the bytes")
	require.Equal(t, totalHolding(own), certified.Holding())
	require.Contains(t, certified.Method, "residue: re-scanned every 10m0s")
	require.Nil(t, st.Layers[0].PhysicalLatest)

	_, err = direct.Exec(ctx, `VACUUM FULL rescan_clean`)
	require.NoError(t, err)
	require.Zero(t, totalHolding(scanEveryPage(t, direct, "rescan_clean", diskRuns(gone.vectors), gone.subject)))

	rig.Advance(10 * time.Minute)
	rig.Engine.RescanDue(ctx)
	st, err = rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	require.Equal(t, ledger.AddendumRescan, latest.Kind)
	require.Equal(t, connector.PhysicalScanned, latest.Physical.Status)
	require.Zero(t, latest.Physical.Holding())
	require.Positive(t, latest.Physical.Scanned())
	require.Nil(t, latest.NextAt, "clean: no later re-scan")
	require.Equal(t, certified.Holding(), st.Layers[0].Physical.Holding(), "the certified scan is not rewritten")

	report, err := certificate.VerifyReport(latest.Report, rig.Keys)
	require.NoError(t, err)
	require.Equal(t, certificate.EventPhysical, report.Kind)
	require.Equal(t, id, report.RunID)
	require.Equal(t, int64(0), report.Layers[0].Residual)
	require.Equal(t, latest.Physical.Scanned(), report.Layers[0].Found)
	var sr certificate.SignedReport
	require.NoError(t, json.Unmarshal(latest.Report, &sr))
	require.Equal(t, *latest.LogIndex, sr.Log.Index)
	leaf, err := rig.Log.Record(ctx, sr.Log.Index)
	require.NoError(t, err)
	require.Equal(t, sr.Log.Leaf, leaf, "the log holds the report's event")
	require.NotContains(t, string(latest.Report), gone.subject)

	rig.Advance(time.Hour)
	rig.Engine.RescanDue(ctx)
	st, err = rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	require.Len(t, st.PhysicalAddenda, 2, "the certified residue and one clean re-scan")
}

// TestPhysicalLater_DeadlineWithResidueIsStated: with no vacuum, the
// re-scans keep finding the bytes, as the test's own scan does; the one
// after which the next would pass the request's deadline says so and ends
// them.
func TestPhysicalLater_DeadlineWithResidueIsStated(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "rescan-deadline-gone-3b9d", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "rescan-deadline-kept-f41a", vectors: make([][]float32, 100)}
	scrubTable(t, direct, "rescan_deadline", 64, gone, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, 15*time.Minute, rescanLayer(t, store, "rescan_deadline"))

	id := rig.Forget(t, gone.subject)
	rig.Advance(10 * time.Minute)
	rig.Engine.RescanDue(ctx)
	st, err := rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	own := totalHolding(scanEveryPage(t, direct, "rescan_deadline", diskRuns(gone.vectors), gone.subject))
	require.Positive(t, own)
	require.Equal(t, own, latest.Physical.Holding())
	require.Nil(t, latest.NextAt)
	require.Contains(t, latest.Note, "the request's deadline")
	require.Contains(t, latest.Note, "still in")
	report, err := certificate.VerifyReport(latest.Report, rig.Keys)
	require.NoError(t, err)
	require.Equal(t, own, report.Layers[0].Residual)

	rig.Advance(time.Hour)
	rig.Engine.RescanDue(ctx)
	st, err = rig.Engine.Status(ctx, id)
	require.NoError(t, err)
	require.Len(t, st.PhysicalAddenda, 2, "no re-scan after the deadline")
}

// TestPhysicalLater_RestartLosesTheBytes: a process that starts on the
// ledger after the one that forgot (a new layer on the same table, a new
// engine) holds no bytes to look for; once the pending re-scan is a whole
// interval overdue it states, in status and in the log, that the bytes
// were held in memory only and the proxy restarted.
func TestPhysicalLater_RestartLosesTheBytes(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	gone := &pagesPerson{subject: "rescan-restart-gone-77e0", vectors: make([][]float32, 20)}
	kept := &pagesPerson{subject: "rescan-restart-kept-0c5b", vectors: make([][]float32, 100)}
	scrubTable(t, direct, "rescan_restart", 64, gone, kept)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rig := enginetest.New(t, time.Hour, rescanLayer(t, store, "rescan_restart"))
	id := rig.Forget(t, gone.subject)

	restarted, err := engine.New(engine.Config{Ledger: rig.Ledger, Hasher: rig.Hasher, Certifier: rig.Certifier, Now: rig.Now,
		Layers: []connector.Layer{rescanLayer(t, store, "rescan_restart")}})
	require.NoError(t, err)
	defer restarted.Close()
	rig.Advance(20 * time.Minute)
	restarted.RescanDue(ctx)
	st, err := restarted.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	require.Equal(t, ledger.AddendumLost, latest.Kind)
	require.Equal(t, connector.PhysicalNotPossible, latest.Physical.Status)
	require.Contains(t, latest.Physical.Reason, "not possible: the bytes to look for were held in memory only and the proxy restarted")
	report, err := certificate.VerifyReport(latest.Report, rig.Keys)
	require.NoError(t, err)
	require.Contains(t, report.Layers[0].Method, "the proxy restarted")
	require.NotContains(t, string(latest.Report), gone.subject)
}
