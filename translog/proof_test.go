package tlog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/tlog"
	"github.com/stretchr/testify/require"
)

// proofFixture is a log of 9 records, its checkpoint, and the
// tlog-proof of record 4.
func proofFixture(t testing.TB) (tlog.Proof, []byte) {
	ctx := context.Background()
	l := newLog(t, &tlog.MemoryStorage{})
	appendRecords(t, l, 0, 9)
	cp := sign(t, l)
	hashes, err := l.InclusionProof(ctx, 4, cp.Size)
	require.NoError(t, err)
	p := tlog.Proof{Index: 4, Hashes: hashes, Checkpoint: cp}
	return p, tlog.FormatProof(p)
}

func TestProof_RoundTripsAndVerifies(t *testing.T) {
	p, text := proofFixture(t)
	require.True(t, strings.HasPrefix(string(text), "c2sp.org/tlog-proof@v1\nindex 4\n"), "%s", text)
	require.Contains(t, string(text), "\n\n"+string(p.Checkpoint.Note[:len(testOrigin)]))

	got, err := tlog.ParseProof(text, verifiers)
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.NoError(t, tlog.VerifyInclusion(got.Checkpoint, got.Index, record(4), got.Hashes))

	p.Extra = []byte("context the signature does not cover")
	withExtra := tlog.FormatProof(p)
	require.True(t, strings.HasPrefix(string(withExtra), "c2sp.org/tlog-proof@v1\nextra "+base64.StdEncoding.EncodeToString(p.Extra)+"\nindex 4\n"))
	got, err = tlog.ParseProof(withExtra, verifiers)
	require.NoError(t, err)
	require.Equal(t, p, got)

	// A tree of one record: no hashes, the empty line follows the index.
	l := newLog(t, &tlog.MemoryStorage{})
	appendRecords(t, l, 0, 1)
	one := tlog.Proof{Index: 0, Hashes: tlog.RecordProof{}, Checkpoint: sign(t, l)}
	text = tlog.FormatProof(one)
	require.True(t, strings.HasPrefix(string(text), "c2sp.org/tlog-proof@v1\nindex 0\n\n"+testOrigin+"\n1\n"))
	got, err = tlog.ParseProof(text, verifiers)
	require.NoError(t, err)
	require.NoError(t, tlog.VerifyInclusion(got.Checkpoint, 0, record(0), got.Hashes))
}

func TestParseProof_Rejects(t *testing.T) {
	p, text := proofFixture(t)
	head, cp, ok := strings.Cut(string(text), "\n\n")
	require.True(t, ok)
	lines := strings.Split(head, "\n") // header, index, hashes
	join := func(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n\n" + cp) }
	hashLines := lines[2:]
	many := make([]string, 64)
	for i := range many {
		many[i] = hashLines[0]
	}
	garbled := tlog.FormatProof(tlog.Proof{Index: 4, Hashes: p.Hashes, Checkpoint: forkedCheckpoint(t, 9)})
	garbled = bytes.Replace(garbled, []byte("— "+testOrigin+" "), []byte("— "+testOrigin+" x"), 1)

	for _, c := range []struct {
		name string
		text []byte
		want error
	}{
		{"WrongHeader", join(append([]string{"c2sp.org/tlog-proof@v2"}, lines[1:]...)...), tlog.ErrMalformedProof},
		{"NoIndex", join(append([]string{lines[0]}, hashLines...)...), tlog.ErrMalformedProof},
		{"IndexWithLeadingZero", join(append([]string{lines[0], "index 04"}, hashLines...)...), tlog.ErrMalformedProof},
		{"NegativeIndex", join(append([]string{lines[0], "index -4"}, hashLines...)...), tlog.ErrMalformedProof},
		{"IndexBeyondTree", join(append([]string{lines[0], "index 9"}, hashLines...)...), tlog.ErrMalformedProof},
		{"ExtraAfterIndex", join(append([]string{lines[0], lines[1], "extra AAAA"}, hashLines...)...), tlog.ErrMalformedProof},
		{"EmptyExtra", join(append([]string{lines[0], "extra ", lines[1]}, hashLines...)...), tlog.ErrMalformedProof},
		{"BadHash", join(append([]string{lines[0], lines[1], "AAAA"}, hashLines...)...), tlog.ErrMalformedProof},
		{"HashWithCarriageReturn", join(append([]string{lines[0], lines[1], hashLines[0] + "\r"}, hashLines[1:]...)...), tlog.ErrMalformedProof},
		{"TooManyHashes", join(append([]string{lines[0], lines[1]}, many...)...), tlog.ErrMalformedProof},
		{"NoEmptyLine", []byte(head + "\n"), tlog.ErrMalformedProof},
		{"Empty", nil, tlog.ErrMalformedProof},
		{"CheckpointNotSigned", []byte(head + "\n\n" + strings.SplitAfterN(cp, "\n", 4)[0]), tlog.ErrMalformedCheckpoint},
		{"CheckpointSignatureGarbled", garbled, tlog.ErrMalformedCheckpoint},
		{"CheckpointBySomeoneElse", tlog.FormatProof(tlog.Proof{Index: 4, Hashes: p.Hashes, Checkpoint: tlog.Checkpoint{Note: signText(t, forgerKey, testOrigin+"\n9\n"+p.Checkpoint.Root.String()+"\n")}}), tlog.ErrUnverifiedCheckpoint},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tlog.ParseProof(c.text, verifiers)
			require.ErrorIs(t, err, c.want)
		})
	}
}
