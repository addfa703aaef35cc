// Package enginetest builds, for the tests of the packages beside engine
// (reconcile, retention), a forget engine on a fresh SQLite ledger and an
// in-memory transparency log, with a clock the test reads.
package enginetest

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// Rig is an engine and what a test checks behind it: the ledger, the
// hasher of its subjects, the certifier, the keys its reports verify
// under and the log it appends to.
type Rig struct {
	Engine    *engine.Engine
	Ledger    *ledger.SQLite
	Hasher    *ledger.Hasher
	Certifier *engine.Certifier
	Keys      certificate.KeySet
	Log       *translog.Log
	Now       func() time.Time
	// Advance moves the clock Now reads.
	Advance func(time.Duration)
}

// New returns a Rig whose forgets give up after deadline, closed when the
// test ends.
func New(t *testing.T, deadline time.Duration, layers ...connector.Layer) Rig {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	salt := make([]byte, 32)
	_, _ = rand.Read(salt)
	h, err := ledger.NewHasher(salt)
	require.NoError(t, err)
	signer, err := certificate.GenerateKey(rand.Reader)
	require.NoError(t, err)
	const origin = "test.lethe/log"
	log, err := translog.New(&translog.MemoryStorage{}, signer.NoteSigner(origin), origin)
	require.NoError(t, err)
	keys, err := certificate.NewKeySet(origin, signer.TrustedKey(time.Unix(0, 0)))
	require.NoError(t, err)
	var mu sync.Mutex
	at := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); at = at.Add(d) }
	c := engine.NewCertifier(engine.CertifierConfig{Signer: signer, Keys: keys, Log: log, Tool: "engine test", Now: now,
		RulesSHA256: strings.Repeat("0", 64)})
	e, err := engine.New(engine.Config{Ledger: l, Hasher: h, Layers: layers, Deadline: deadline, Now: now, Certifier: c})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(); l.Close() })
	return Rig{Engine: e, Ledger: l, Hasher: h, Certifier: c, Keys: keys, Log: log, Now: now, Advance: advance}
}

// Record puts confirmed ledger entries about subject.
func (r Rig) Record(t *testing.T, subject string, entries ...ledger.Entry) {
	t.Helper()
	ctx := context.Background()
	for i := range entries {
		entries[i].Subject = r.Hasher.Hash(subject)
	}
	id, err := r.Ledger.Intend(ctx, entries)
	require.NoError(t, err)
	require.NoError(t, r.Ledger.Confirm(ctx, id))
}

// Forget previews and confirms a forget of subject, acknowledging a
// preview that found nothing, waits for its first run to end and returns
// its request id.
func (r Rig) Forget(t *testing.T, subject string) string {
	t.Helper()
	ctx := context.Background()
	p, err := r.Engine.Preview(ctx, subject)
	require.NoError(t, err)
	f, err := r.Engine.Forget(ctx, subject, p.Token, engine.ForgetOptions{NothingFound: p.NothingFound})
	require.NoError(t, err)
	r.Engine.Wait()
	return f.RequestID
}
