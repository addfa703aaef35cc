package certificate

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A Checkpoint is the signed statement of the transparency log's state
// (C2SP tlog-checkpoint): its origin (the log's name), tree size and
// RFC 6962 root hash.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// text is the checkpoint body: origin, decimal size and base64 root, one per line.
func (c Checkpoint) text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
}

// SignCheckpoint returns c as a C2SP signed note, signed by s under the
// name c.Origin.
func (s *Signer) SignCheckpoint(c Checkpoint) (string, error) {
	if c.Size < 0 {
		return "", fmt.Errorf("certificate: checkpoint size %d is negative", c.Size)
	}
	if strings.Contains(c.Origin, "\n") {
		return "", fmt.Errorf("certificate: checkpoint origin %q contains a newline", c.Origin)
	}
	msg, err := note.Sign(&note.Note{Text: c.text()}, s.NoteSigner(c.Origin))
	if err != nil {
		return "", fmt.Errorf("certificate: signing checkpoint for origin %q (a note name: no spaces, no '+'): %w", c.Origin, err)
	}
	return string(msg), nil
}

// noteSigner signs notes with the operator key. note.NewSigner wants the
// key in its own text encoding; implementing the interface avoids one.
type noteSigner struct {
	name string
	key  ed25519.PrivateKey
}

func (n noteSigner) Name() string { return n.name }

// KeyHash is the C2SP signed-note key hash: the first 4 bytes of
// SHA-256(name || "\n" || 0x01 || public key), 0x01 naming Ed25519.
func (n noteSigner) KeyHash() uint32 {
	h := sha256.New()
	h.Write([]byte(n.name + "\n\x01"))
	h.Write(n.key.Public().(ed25519.PublicKey))
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func (n noteSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(n.key, msg), nil }

// OpenCheckpoint verifies a signed checkpoint against keys and parses it.
// The note must be signed under its origin by at least one key in keys, and
// no signature by a key in keys may fail.
func OpenCheckpoint(signed []byte, keys KeySet) (Checkpoint, error) {
	origin, _, ok := strings.Cut(string(signed), "\n")
	if !ok {
		return Checkpoint{}, errors.New("checkpoint is a single line; want a signed note")
	}
	verifiers := make([]note.Verifier, 0, len(keys.keys))
	for _, k := range keys.keys {
		vkey, err := note.NewEd25519VerifierKey(origin, k.PublicKey)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("trusted key %s: %w", k.ID, err)
		}
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("checkpoint origin %q is not a valid note name: %w", origin, err)
		}
		verifiers = append(verifiers, v)
	}
	n, err := note.Open(signed, note.VerifierList(verifiers...))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		if errors.As(err, &unverified) {
			return Checkpoint{}, fmt.Errorf("checkpoint of %q is not signed by a trusted key", origin)
		}
		return Checkpoint{}, fmt.Errorf("checkpoint of %q: %w", origin, err)
	}
	return parseCheckpointText(n.Text)
}

// parseCheckpointText reads a checkpoint body. Lines after the root are
// extension lines (C2SP tlog-checkpoint); they are signed but not used here.
func parseCheckpointText(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, errors.New("checkpoint body needs an origin, a size and a root hash line")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	// Only the canonical decimal form: no sign, no leading zeros.
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint tree size %q is not a decimal number", lines[1])
	}
	root, err := decodeBase64(lines[2], 32)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint root hash: %w", err)
	}
	return Checkpoint{Origin: lines[0], Size: size, Root: tlog.Hash(root)}, nil
}

// decodeBase64 decodes canonical standard base64 (re-encoding gives s back:
// no newlines, no stray bits) of exactly n bytes, or any length if n < 0.
func decodeBase64(s string, n int) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, errors.New("not canonical standard base64")
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	return b, nil
}
