package pcwing

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// crashedRun writes, through a capture core, one intent per record id of
// namespace tenant-a about bob, settles none of them and stops as a crash
// would (its ledger handle gone), leaving them orphaned.
func crashedRun(t *testing.T, path string, h *ledger.Hasher, ids ...string) {
	t.Helper()
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	core := capture.New(capture.Config{Ledger: l, Hasher: h})
	for _, id := range ids {
		_, refusal := core.Intend(ledger.StorePinecone, []extract.Tag{{Table: "local/tenant-a", Op: extract.OpWrite, ID: id, Subjects: []string{"bob"}}})
		require.Nil(t, refusal)
	}
	core.Close()
	require.NoError(t, l.Close())
}

// recoveringWing is the next run's wing over the ledger at path, its
// recovery dropping absent intents at once when absentAfter is 0.
func recoveringWing(t *testing.T, path, url string, h *ledger.Hasher, absentAfter config.Duration) (*Wing, *ledger.SQLite) {
	t.Helper()
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	core := capture.New(capture.Config{Ledger: l, Hasher: h})
	t.Cleanup(core.Close)
	cfg := parse(t, `pinecone:
  listen: 127.0.0.1:0
  indexes:
    - {name: local, host: "`+url+`", namespaces: [{namespace: tenant-a, subjects: [user_id]}]}
`)
	w := New(cfg, core, nil)
	w.getenv = func(string) string { return "local-key" }
	w.settings.VerifyDeadline = absentAfter
	t.Cleanup(w.Close)
	return w, l
}

// Intents a crash left pending are resolved by Listen, before it binds:
// the record the index holds is confirmed, the one it does not is
// dropped once older than pinecone.verify_deadline, and left pending
// while younger (Pinecone may show a write late).
func TestListen_RecoversPendingIntentsByFetchingTheirIDs(t *testing.T) {
	url := startEmulator(t, emulator.Config{APIKey: "local-key"})
	upsertAround(t, url, "tenant-a", map[string]string{"p1": "bob"})
	h, err := ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)

	for _, tc := range []struct {
		name        string
		absentAfter config.Duration
		want        []string
	}{
		{"absent and old enough: dropped", 0, []string{"local/tenant-a p1 confirmed"}},
		{"absent but young: left pending", config.Duration(60e9), []string{"local/tenant-a a1 pending", "local/tenant-a p1 confirmed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			crashedRun(t, path, h, "p1", "a1")
			w, l := recoveringWing(t, path, url, h, tc.absentAfter)
			require.Equal(t, []string{"local/tenant-a a1 pending", "local/tenant-a p1 pending"}, sorted(states(t, l, h, "bob")))
			require.NoError(t, w.Listen())
			assert.Equal(t, tc.want, sorted(states(t, l, h, "bob")))
		})
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
