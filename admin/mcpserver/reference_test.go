package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReferences_OpenOnlyWhatTheySealedUnderTheirKeyAndKindUntilExpiry(t *testing.T) {
	key := []byte(strings.Repeat("a", 32))
	refs, err := NewReferences(key, time.Hour)
	require.NoError(t, err)
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	refs.now = func() time.Time { return at }

	ref := refs.Seal(KindSubject, alice)
	assert.NotContains(t, ref, "alice")
	assert.NotEqual(t, ref, refs.Seal(KindSubject, alice), "each reference is fresh: two are not linkable")
	got, err := refs.Open(KindSubject, ref)
	require.NoError(t, err)
	assert.Equal(t, alice, got)

	replica, err := NewReferences(key, time.Hour)
	require.NoError(t, err)
	replica.now = refs.now
	got, err = replica.Open(KindSubject, ref)
	require.NoError(t, err, "another replica with the same key file opens it")
	assert.Equal(t, alice, got)

	other, err := NewReferences([]byte(strings.Repeat("b", 32)), time.Hour)
	require.NoError(t, err)
	body := strings.TrimPrefix(ref, KindSubject)
	flipped := body[:10] + string(body[10]^1) + body[11:]
	for name, bad := range map[string]func() (string, error){
		"another key":  func() (string, error) { return other.Open(KindSubject, ref) },
		"another kind": func() (string, error) { return refs.Open(KindSecret, KindSecret+body) },
		"altered":      func() (string, error) { return refs.Open(KindSubject, KindSubject+flipped) },
		"cut short":    func() (string, error) { return refs.Open(KindSubject, ref[:20]) },
		"no prefix":    func() (string, error) { return refs.Open(KindSubject, alice) },
	} {
		_, err := bad()
		require.ErrorIs(t, err, ErrReference, name)
		assert.NotContains(t, err.Error(), "alice", name)
		assert.NotContains(t, err.Error(), body, name)
	}

	at = at.Add(time.Hour + time.Second)
	_, err = refs.Open(KindSubject, ref)
	require.ErrorIs(t, err, ErrReference)
	assert.Contains(t, err.Error(), "expired at 2026-12-06T01:00:00Z; run preview again")
}

func TestReferences_RefuseAShortKey(t *testing.T) {
	_, err := NewReferences([]byte("short"), 0)
	require.ErrorContains(t, err, "head -c 32 /dev/urandom")
}
