package translog_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
)

const emptyRootB64 = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" // SHA-256("")

func TestParseCheckpoint_ReadsWhatSignWrites(t *testing.T) {
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 10)
	cp := sign(t, l)
	require.Equal(t, testOrigin, cp.Origin)
	require.Equal(t, int64(10), cp.Size)
	require.True(t, strings.HasPrefix(string(cp.Note), testOrigin+"\n10\n"+cp.Root.String()+"\n\n— "+testOrigin+" "), "%s", cp.Note)

	// A witness's cosignature by a key the client does not know is ignored.
	witness := newKey("witness.example", 9)
	n, err := note.Open(cp.Note, verifiers)
	require.NoError(t, err)
	cosigned, err := note.Sign(n, witness.signer)
	require.NoError(t, err)
	got, err := translog.ParseCheckpoint(cosigned, verifiers)
	require.NoError(t, err)
	require.Equal(t, cp.Root, got.Root)
}

func TestParseCheckpoint_Rejects(t *testing.T) {
	root := "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ="
	good := signText(t, logKey, testOrigin+"\n5\n"+root+"\n")
	_, err := translog.ParseCheckpoint(good, verifiers)
	require.NoError(t, err)
	edited := bytes.Replace(good, []byte("\n5\n"), []byte("\n6\n"), 1)

	for _, c := range []struct {
		name string
		note []byte
		want error
	}{
		{"SignedByAnotherKeyOfTheSameName", signText(t, forgerKey, testOrigin+"\n5\n"+root+"\n"), translog.ErrUnverifiedCheckpoint},
		{"SignedByAKnownKeyNotNamedAfterTheOrigin", signText(t, otherKey, testOrigin+"\n5\n"+root+"\n"), translog.ErrUnverifiedCheckpoint},
		{"EditedBody", edited, translog.ErrUnverifiedCheckpoint},
		{"Unsigned", []byte(testOrigin + "\n5\n" + root + "\n"), translog.ErrMalformedCheckpoint},
		{"NotANote", []byte("hello"), translog.ErrMalformedCheckpoint},
		{"SizeWithLetters", signText(t, logKey, testOrigin+"\n5a\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"NegativeSize", signText(t, logKey, testOrigin+"\n-5\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"SizeWithPlus", signText(t, logKey, testOrigin+"\n+5\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"SizeWithLeadingZero", signText(t, logKey, testOrigin+"\n05\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"SizeWithSpace", signText(t, logKey, testOrigin+"\n 5\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"SizeHex", signText(t, logKey, testOrigin+"\n0x5\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"SizeOverflows", signText(t, logKey, testOrigin+"\n9223372036854775808\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"EmptySize", signText(t, logKey, testOrigin+"\n\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"RootNotBase64", signText(t, logKey, testOrigin+"\n5\nnot*base64\n"), translog.ErrMalformedCheckpoint},
		{"RootTooShort", signText(t, logKey, testOrigin+"\n5\nAAAA\n"), translog.ErrMalformedCheckpoint},
		{"RootURLBase64", signText(t, logKey, testOrigin+"\n5\n"+strings.NewReplacer("+", "-", "/", "_").Replace("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")+"\n"), translog.ErrMalformedCheckpoint},
		{"RootWithoutPadding", signText(t, logKey, testOrigin+"\n5\n"+strings.TrimSuffix(root, "=")+"\n"), translog.ErrMalformedCheckpoint},
		{"RootNonCanonicalPadBits", signText(t, logKey, testOrigin+"\n5\n"+root[:42]+"R=\n"), translog.ErrMalformedCheckpoint},
		{"BlankExtensionLine", signText(t, logKey, testOrigin+"\n5\n"+root+"\n\nextension\n"), translog.ErrMalformedCheckpoint},
		{"TwoLines", signText(t, logKey, testOrigin+"\n5\n"), translog.ErrMalformedCheckpoint},
		{"EmptyOrigin", signText(t, logKey, "\n5\n"+root+"\n"), translog.ErrMalformedCheckpoint},
		{"EmptyTreeWithARoot", signText(t, logKey, testOrigin+"\n0\n"+root+"\n"), translog.ErrMalformedCheckpoint},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := translog.ParseCheckpoint(c.note, verifiers)
			require.ErrorIs(t, err, c.want)
		})
	}

	_, err = translog.ParseCheckpoint(signText(t, logKey, testOrigin+"\n0\n"+emptyRootB64+"\n"), verifiers)
	require.NoError(t, err, "the empty tree")
	// C2SP tlog-checkpoint: extension lines are signed, and clients that
	// do not know them ignore them; certificate verifiers read them alike.
	_, err = translog.ParseCheckpoint(signText(t, logKey, testOrigin+"\n5\n"+root+"\nextension\n"), verifiers)
	require.NoError(t, err, "an extension line")
}

// TestParseCheckpoint_RefusesSignatureLinesNotInCanonicalBase64: note.Open
// reads base64 with stray bits after the last byte; certificate verifiers
// refuse it, and so does the log's client.
func TestParseCheckpoint_RefusesSignatureLinesNotInCanonicalBase64(t *testing.T) {
	good := signText(t, logKey, testOrigin+"\n5\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n")
	_, err := translog.ParseCheckpoint(good, verifiers)
	require.NoError(t, err)
	// The signature line holds 68 bytes: its last digit before "=" carries
	// two bits that no byte holds.
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	i := len(good) - 3 // before "=\n"
	d := strings.IndexByte(digits, good[i])
	require.Zero(t, d%4, "stray bits already set in %s", good)
	stray := append(append(bytes.Clone(good[:i]), digits[d+1]), good[i+1:]...)
	_, err = translog.ParseCheckpoint(stray, verifiers)
	require.ErrorIs(t, err, translog.ErrMalformedCheckpoint)
}
