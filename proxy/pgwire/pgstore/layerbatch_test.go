package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
)

// The config refuses a window the layer would cut: both name one bound.
func TestMaxPhysicalWindow_IsTheConfigBound(t *testing.T) {
	require.Equal(t, config.MaxPhysicalWindow, MaxPhysicalWindow)
	require.Less(t, MaxPhysicalWindow, RescanHeldFor, "the batch must run while the bytes are held")
}

func TestLayer_PhysicalWindowOnlyForASettingWithSteps(t *testing.T) {
	l := &Layer{}
	l.BatchPhysical(time.Hour)
	require.Zero(t, l.PhysicalWindow(), "physical: off has no step")
	l.ReportPhysical(DefaultPhysicalScan)
	require.Zero(t, l.PhysicalWindow(), "physical: report has no step")
	l.RemovePhysical(PhysicalSteps{Vacuum: true})
	require.Equal(t, time.Hour, l.PhysicalWindow())
	l.BatchPhysical(48 * time.Hour)
	require.Equal(t, MaxPhysicalWindow, l.PhysicalWindow(), "cut to the bound the bytes are held for")
}

// A subject whose bytes the layer does not hold (a restart) is answered
// ErrBytesNotHeld, and no step runs for it: the layer has no store here,
// so a step would fail the test.
func TestLayer_RescanBatchWithoutBytesRunsNoStep(t *testing.T) {
	l := &Layer{}
	l.ReportPhysical(DefaultPhysicalScan)
	l.RemovePhysical(PhysicalSteps{Vacuum: true})
	l.BatchPhysical(time.Hour)
	l.kept = map[string]keptPrint{"expired": {print: newFingerprint("expired"), until: time.Now().Add(-time.Second)}}
	var got []string
	l.RescanBatch(context.Background(), []string{"alice", "expired"}, func(subject string, ph *connector.Physical, err error) {
		require.Nil(t, ph)
		require.True(t, errors.Is(err, ErrBytesNotHeld))
		got = append(got, subject)
	})
	require.Equal(t, []string{"alice", "expired"}, got)
	require.Empty(t, l.kept, "bytes held past RescanHeldFor are dropped")
}

// scrub rebuilds what any forget of the batch left: the relations that
// hold some forget's bytes, with their sizes.
func TestHoldingAny_RelationsHoldingAnyForgetsBytes(t *testing.T) {
	scan := func(heap, hnsw int64) *connector.Physical {
		return &connector.Physical{Status: connector.PhysicalScanned, Relations: []connector.RelationPages{
			{Relation: "public.docs", Kind: "heap", Pages: 10, Scanned: 10, Holding: heap, HoldingVector: heap},
			{Relation: "public.docs_hnsw", Kind: "hnsw", Pages: 30, Scanned: 30, Holding: hnsw, HoldingVector: hnsw},
		}}
	}
	require.Nil(t, holdingAny([]*connector.Physical{scan(0, 0), {Status: connector.PhysicalNotPossible}}))
	got := holdingAny([]*connector.Physical{scan(0, 2), scan(0, 0), scan(0, 3), {Status: connector.PhysicalNotPossible}})
	require.NotNil(t, got)
	require.Len(t, got.Relations, 2)
	require.Zero(t, got.Relations[0].Holding, "no forget left bytes in the heap: no rewrite")
	require.Equal(t, int64(5), got.Relations[1].Holding)
	require.Equal(t, int64(30), got.Relations[1].Pages)
	require.Equal(t, 2, holdingCount([]*connector.Physical{scan(0, 2), scan(0, 0), scan(1, 0)}))
}
