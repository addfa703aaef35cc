package engine

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestToken_RoundTripAndRefusals(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	tok := token{subject: [32]byte{1}, counts: [32]byte{2}, expires: now.Add(time.Minute)}
	s := tok.seal(key)

	got, hash, err := openToken(s, key, now)
	require.NoError(t, err)
	require.Equal(t, tok.subject, got.subject)
	require.Equal(t, tok.counts, got.counts)
	require.True(t, got.expires.Equal(tok.expires))
	require.NotEqual(t, [32]byte{}, hash)
	require.NotEqual(t, s, tok.seal(key), "every token is unique (nonce), so each is single-use on its own")

	raw, _ := base64.RawURLEncoding.DecodeString(s)
	flipped := append([]byte(nil), raw...)
	flipped[40] ^= 1 // the counts digest
	for name, tc := range map[string]struct {
		token string
		key   []byte
		now   time.Time
		want  error
	}{
		"expired":        {s, key, now.Add(time.Minute), ErrTokenExpired},
		"other key":      {s, []byte("another key, another salt........"), now, ErrTokenMalformed},
		"edited counts":  {base64.RawURLEncoding.EncodeToString(flipped), key, now, ErrTokenMalformed},
		"truncated":      {s[:20], key, now, ErrTokenMalformed},
		"not base64":     {"!!!", key, now, ErrTokenMalformed},
		"empty":          {"", key, now, ErrTokenMalformed},
		"future version": {base64.RawURLEncoding.EncodeToString(append([]byte{9}, raw[1:]...)), key, now, ErrTokenMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := openToken(tc.token, tc.key, tc.now)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestSealer_BindsTheSubjectToItsRequest(t *testing.T) {
	s := newSealer([]byte("0123456789abcdef0123456789abcdef"))
	sealed := s.seal("req-1", "alice@example.com")
	got, err := s.open("req-1", sealed)
	require.NoError(t, err)
	require.Equal(t, "alice@example.com", got)
	require.NotContains(t, string(sealed), "alice")
	_, err = s.open("req-2", sealed)
	require.Error(t, err, "moved to another request")
	_, err = newSealer([]byte("another salt-derived key........")).open("req-1", sealed)
	require.Error(t, err)
	_, err = s.open("req-1", sealed[:5])
	require.Error(t, err)
}

func TestLayerState_GoneIsSortedAndUnionDedupes(t *testing.T) {
	l := layerState{Deleted: union([]string{"b", "a"}, []string{"c", "a"})}
	require.Equal(t, []string{"a", "b", "c"}, l.gone())
	require.Equal(t, []string{"a", "b", "c"}, union([]string{"a", "b"}, []string{"b", "c"}))
}
