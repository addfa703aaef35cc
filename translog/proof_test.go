package translog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
)

// proofFixture is a log of 9 records, its checkpoint, and the
// tlog-proof of record 4.
func proofFixture(t testing.TB) (translog.Proof, []byte) {
	ctx := context.Background()
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 9)
	cp := sign(t, l)
	hashes, err := l.InclusionProof(ctx, 4, cp.Size)
	require.NoError(t, err)
	p := translog.Proof{Index: 4, Hashes: hashes, Checkpoint: cp}
	return p, translog.FormatProof(p)
}

func TestProof_RoundTripsAndVerifies(t *testing.T) {
	p, text := proofFixture(t)
	require.True(t, strings.HasPrefix(string(text), "c2sp.org/tlog-proof@v1\nindex 4\n"), "%s", text)
	require.Contains(t, string(text), "\n\n"+string(p.Checkpoint.Note[:len(testOrigin)]))

	got, err := translog.ParseProof(text, verifiers)
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.NoError(t, translog.VerifyInclusion(got.Checkpoint, got.Index, record(4), got.Hashes))

	p.Extra = []byte("context the signature does not cover")
	withExtra := translog.FormatProof(p)
	require.True(t, strings.HasPrefix(string(withExtra), "c2sp.org/tlog-proof@v1\nextra "+base64.StdEncoding.EncodeToString(p.Extra)+"\nindex 4\n"))
	got, err = translog.ParseProof(withExtra, verifiers)
	require.NoError(t, err)
	require.Equal(t, p, got)

	// A tree of one record: no hashes, the empty line follows the index.
	l := newLog(t, &translog.MemoryStorage{})
	appendRecords(t, l, 0, 1)
	one := translog.Proof{Index: 0, Hashes: translog.RecordProof{}, Checkpoint: sign(t, l)}
	text = translog.FormatProof(one)
	require.True(t, strings.HasPrefix(string(text), "c2sp.org/tlog-proof@v1\nindex 0\n\n"+testOrigin+"\n1\n"))
	got, err = translog.ParseProof(text, verifiers)
	require.NoError(t, err)
	require.NoError(t, translog.VerifyInclusion(got.Checkpoint, 0, record(0), got.Hashes))
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
	garbled := translog.FormatProof(translog.Proof{Index: 4, Hashes: p.Hashes, Checkpoint: forkedCheckpoint(t, 9)})
	garbled = bytes.Replace(garbled, []byte("— "+testOrigin+" "), []byte("— "+testOrigin+" x"), 1)

	for _, c := range []struct {
		name string
		text []byte
		want error
	}{
		{"WrongHeader", join(append([]string{"c2sp.org/tlog-proof@v2"}, lines[1:]...)...), translog.ErrMalformedProof},
		{"NoIndex", join(append([]string{lines[0]}, hashLines...)...), translog.ErrMalformedProof},
		{"IndexWithLeadingZero", join(append([]string{lines[0], "index 04"}, hashLines...)...), translog.ErrMalformedProof},
		{"NegativeIndex", join(append([]string{lines[0], "index -4"}, hashLines...)...), translog.ErrMalformedProof},
		{"IndexBeyondTree", join(append([]string{lines[0], "index 9"}, hashLines...)...), translog.ErrMalformedProof},
		{"ExtraAfterIndex", join(append([]string{lines[0], lines[1], "extra AAAA"}, hashLines...)...), translog.ErrMalformedProof},
		{"EmptyExtra", join(append([]string{lines[0], "extra ", lines[1]}, hashLines...)...), translog.ErrMalformedProof},
		{"BadHash", join(append([]string{lines[0], lines[1], "AAAA"}, hashLines...)...), translog.ErrMalformedProof},
		{"HashWithCarriageReturn", join(append([]string{lines[0], lines[1], hashLines[0] + "\r"}, hashLines[1:]...)...), translog.ErrMalformedProof},
		{"TooManyHashes", join(append([]string{lines[0], lines[1]}, many...)...), translog.ErrMalformedProof},
		{"NoEmptyLine", []byte(head + "\n"), translog.ErrMalformedProof},
		{"Empty", nil, translog.ErrMalformedProof},
		{"CheckpointNotSigned", []byte(head + "\n\n" + strings.SplitAfterN(cp, "\n", 4)[0]), translog.ErrMalformedCheckpoint},
		{"CheckpointSignatureGarbled", garbled, translog.ErrMalformedCheckpoint},
		{"CheckpointBySomeoneElse", translog.FormatProof(translog.Proof{Index: 4, Hashes: p.Hashes, Checkpoint: translog.Checkpoint{Note: signText(t, forgerKey, testOrigin+"\n9\n"+p.Checkpoint.Root.String()+"\n")}}), translog.ErrUnverifiedCheckpoint},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := translog.ParseProof(c.text, verifiers)
			require.ErrorIs(t, err, c.want)
		})
	}
}
