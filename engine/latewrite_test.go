package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
)

func TestLateWrite_DeletesLogsAndShowsInTheRequestsStatus(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1"}}
	te := newTestEngine(t, time.Hour, layer)
	id := te.forget(t, "alice")

	_, err := te.LateWrite(ctx, ledger.StorePinecone, "idx/ns", "bob")
	require.ErrorIs(t, err, ErrNotForgotten)

	layer.mu.Lock()
	layer.present = []string{"v9"} // written after the forget, around the proxy
	layer.mu.Unlock()
	w, err := te.LateWrite(ctx, ledger.StorePinecone, "idx/ns", "alice")
	require.NoError(t, err)
	require.Equal(t, id, w.RequestID)
	require.EqualValues(t, 1, w.Deleted)
	require.Zero(t, w.Residual)
	leaf, err := te.cfg.Certifier.log.Record(ctx, w.LogIndex)
	require.NoError(t, err)
	ev, err := certificate.ParseEvent(leaf)
	require.NoError(t, err)
	require.Equal(t, certificate.Event{V: 1, Event: certificate.EventLateWrite, RequestID: id}, ev)

	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Len(t, st.LateWrites, 1)
	require.Equal(t, w.LogIndex, st.LateWrites[0].LogIndex)

	size, err := te.cfg.Certifier.log.Size(ctx)
	require.NoError(t, err)
	again, err := te.LateWrite(ctx, ledger.StorePinecone, "idx/ns", "alice")
	require.NoError(t, err)
	require.Zero(t, again.Deleted, "nothing left: a replay changes nothing")
	after, err := te.cfg.Certifier.log.Size(ctx)
	require.NoError(t, err)
	require.Equal(t, size, after, "and logs nothing")

	_, err = te.LateWrite(ctx, ledger.StorePostgres, "public.other", "alice")
	require.ErrorContains(t, err, "no layer")
}
