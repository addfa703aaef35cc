package engine

import (
	"context"
	"errors"
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

// Preview and the check of its token count the ledger once it holds
// every committed write (Config.Settle), and go on when it cannot say.
func TestPreview_SettlesTheLedgerBeforeCounting(t *testing.T) {
	ctx := context.Background()
	te := newTestEngine(t, time.Hour, &fakeLayer{name: "idx/ns", present: []string{"v1"}})
	settled := 0
	te.cfg.Settle = func(context.Context) error { settled++; return nil }
	p, err := te.Preview(ctx, "alice")
	require.NoError(t, err)
	require.Equal(t, 1, settled)
	_, err = te.Forget(ctx, "alice", p.Token)
	require.NoError(t, err)
	te.Wait()
	require.Equal(t, 2, settled, "the token's counts are checked on a settled ledger too")

	te.cfg.Settle = func(context.Context) error { return errors.New("the slot is not reachable") }
	_, err = te.Preview(ctx, "bob")
	require.NoError(t, err, "counted as it is")
}

// commitWatch is a fakeLayer that reports the moment its delete commits.
type commitWatch struct {
	*fakeLayer
	atCommit func()
}

func (c commitWatch) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	return c.fakeLayer.Delete(ctx, subject, ids, func(gone []string) error {
		if err := beforeCommit(gone); err != nil {
			return err
		}
		c.atCommit()
		return nil
	})
}

func TestLateWrite_TheEventIsLoggedBeforeTheDeleteCommits(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1"}}
	var lastAtCommit []byte
	var te testEngine
	te = newTestEngine(t, time.Hour, commitWatch{layer, func() {
		size, err := te.cfg.Certifier.log.Size(ctx)
		require.NoError(t, err)
		lastAtCommit, err = te.cfg.Certifier.log.Record(ctx, size-1)
		require.NoError(t, err)
	}})
	id := te.forget(t, "alice")
	layer.mu.Lock()
	layer.present = []string{"v9"}
	layer.mu.Unlock()
	lastAtCommit = nil
	w, err := te.LateWrite(ctx, ledger.StorePinecone, "idx/ns", "alice")
	require.NoError(t, err)
	require.EqualValues(t, 1, w.Deleted)
	ev, err := certificate.ParseEvent(lastAtCommit)
	require.NoError(t, err, "a crash right after the store's commit must not lose the event")
	require.Equal(t, certificate.Event{V: 1, Event: certificate.EventLateWrite, RequestID: id}, ev)
}

// The capture core's sink deletes a forgotten subject's late write and
// leaves alone one whose tombstone is gone (lifted since the row was read).
func TestDeleteLateWrite_DeletesAForgottenSubjectsRowsAndIgnoresOthers(t *testing.T) {
	ctx := context.Background()
	layer := &fakeLayer{name: "idx/ns", present: []string{"v1"}}
	te := newTestEngine(t, time.Hour, layer)
	te.forget(t, "alice")
	require.NoError(t, te.DeleteLateWrite(ctx, ledger.StorePinecone, "idx/ns", "bob"), "not forgotten: left alone")
	layer.mu.Lock()
	layer.present = []string{"v9"}
	layer.mu.Unlock()
	require.NoError(t, te.DeleteLateWrite(ctx, ledger.StorePinecone, "idx/ns", "alice"))
	layer.mu.Lock()
	defer layer.mu.Unlock()
	require.Empty(t, layer.present, "the late write was deleted")
}
