package engine

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/translog"
)

func TestCertifier_AnnouncesEachSigningKeyOnce(t *testing.T) {
	ctx := context.Background()
	storage := &translog.MemoryStorage{}
	const origin = "test.lethe/log"
	certifier := func() *Certifier {
		s, err := certificate.GenerateKey(rand.Reader)
		require.NoError(t, err)
		l, err := translog.New(storage, s.NoteSigner(origin), origin)
		require.NoError(t, err)
		return NewCertifier(CertifierConfig{Signer: s, Log: l})
	}
	first := certifier()
	logged, err := first.AnnounceKey(ctx)
	require.NoError(t, err)
	require.True(t, logged, "a new log learns its first key")
	logged, err = first.AnnounceKey(ctx)
	require.NoError(t, err)
	require.False(t, logged, "the same key is not announced twice")

	second := certifier() // rotation: same log, new key
	logged, err = second.AnnounceKey(ctx)
	require.NoError(t, err)
	require.True(t, logged)

	size, err := storage.Size(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, size)
	for i, want := range []string{first.signer.KeyID(), second.signer.KeyID()} {
		rec, err := storage.ReadRecord(ctx, int64(i))
		require.NoError(t, err)
		ev, err := certificate.ParseEvent(rec)
		require.NoError(t, err)
		require.Equal(t, certificate.EventKeyRotated, ev.Event)
		require.Equal(t, want, ev.KeyID)
	}
}
