package translog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
)

const testOrigin = "lethe.example/log"

// key is a deterministic Ed25519 note key, so that fuzz seeds signed with
// it stay valid from run to run.
type key struct {
	signer   note.Signer
	verifier note.Verifier
}

func newKey(name string, seed byte) key {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		panic(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		panic(err)
	}
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, v.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{1}, priv.Seed()...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		panic(err)
	}
	return key{s, v}
}

var (
	logKey = newKey(testOrigin, 1)
	// forgerKey has the log's name but another secret: what an attacker
	// without the log's key could sign with.
	forgerKey = newKey(testOrigin, 2)
	otherKey  = newKey("other.example/log", 3)

	verifiers = note.VerifierList(logKey.verifier, otherKey.verifier)
)

// newLog is a log over s signed with logKey.
func newLog(t testing.TB, s translog.Storage) *translog.Log {
	t.Helper()
	l, err := translog.New(s, logKey.signer, testOrigin)
	require.NoError(t, err)
	return l
}

func record(i int) []byte { return []byte(fmt.Sprintf("erasure event %d", i)) }

// appendRecords appends record(from) … record(to-1).
func appendRecords(t testing.TB, l *translog.Log, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		n, err := l.Append(context.Background(), record(i))
		require.NoError(t, err)
		require.Equal(t, int64(i), n)
	}
}

// sign signs l's current tree and parses the result as a client would.
func sign(t testing.TB, l *translog.Log) translog.Checkpoint {
	t.Helper()
	cp, err := l.Sign(context.Background())
	require.NoError(t, err)
	parsed, err := translog.ParseCheckpoint(cp.Note, verifiers)
	require.NoError(t, err)
	require.Equal(t, cp, parsed)
	return parsed
}

// signText signs an arbitrary note text with k.
func signText(t testing.TB, k key, text string) []byte {
	t.Helper()
	b, err := note.Sign(&note.Note{Text: text}, k.signer)
	require.NoError(t, err)
	return b
}

// forkedCheckpoint is a checkpoint of size records, signed with the log's
// key, of a tree whose records differ from record(i): what a log that
// rewrote its history would sign.
func forkedCheckpoint(t testing.TB, size int) translog.Checkpoint {
	t.Helper()
	fork := newLog(t, &translog.MemoryStorage{})
	for i := range size {
		_, err := fork.Append(context.Background(), []byte(fmt.Sprintf("rewritten event %d", i)))
		require.NoError(t, err)
	}
	return sign(t, fork)
}
