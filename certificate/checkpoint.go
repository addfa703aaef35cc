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
	"unicode"
	"unicode/utf8"

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

func (n noteSigner) KeyHash() uint32 { return noteKeyHash(n.name, n.key.Public().(ed25519.PublicKey)) }

func (n noteSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(n.key, msg), nil }

// noteKeyHash is the C2SP signed-note key hash: the first 4 bytes of
// SHA-256(name || "\n" || 0x01 || public key), 0x01 naming Ed25519.
func noteKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n\x01"))
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// noteVerifier checks signed-note signatures by one trusted key under one
// name. note.NewVerifier would want the key in its text encoding, and
// making and parsing that cost more than the rest of opening a checkpoint;
// the name is the checkpoint's origin, so it is made on each open.
type noteVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey // PublicKeySize bytes
}

func (v *noteVerifier) Name() string                { return v.name }
func (v *noteVerifier) KeyHash() uint32             { return v.hash }
func (v *noteVerifier) Verify(msg, sig []byte) bool { return ed25519.Verify(v.key, msg, sig) }

// noteVerifiers finds a checkpoint's verifiers for note.Open as
// note.VerifierList does, without building a map on each open.
type noteVerifiers []noteVerifier

func (vs noteVerifiers) Verifier(name string, hash uint32) (note.Verifier, error) {
	var found note.Verifier
	for i := range vs {
		if v := &vs[i]; v.name == name && v.hash == hash {
			if found != nil {
				return nil, fmt.Errorf("ambiguous key %s+%08x", name, hash) // as note.VerifierList says it
			}
			found = v
		}
	}
	if found == nil {
		return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
	}
	return found, nil
}

// isNoteName is the signed-note rule for names, as note.NewVerifier applies
// it: not empty, UTF-8, and no Unicode space or plus sign.
func isNoteName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// OpenCheckpoint verifies a signed checkpoint against keys and parses it.
// The note must be signed under its origin by at least one key in keys, and
// no signature by a key in keys may fail.
func OpenCheckpoint(signed []byte, keys KeySet) (Checkpoint, error) {
	origin, _, ok := strings.Cut(string(signed), "\n")
	if !ok {
		return Checkpoint{}, errors.New("checkpoint is a single line; want a signed note")
	}
	if !isNoteName(origin) {
		return Checkpoint{}, fmt.Errorf("checkpoint origin %q is not a valid note name: want non-empty UTF-8 without spaces or '+'", origin)
	}
	verifiers := make(noteVerifiers, len(keys.keys))
	for i, k := range keys.keys {
		if len(k.PublicKey) != ed25519.PublicKeySize { // only a KeySet built in code can hold one
			return Checkpoint{}, fmt.Errorf("trusted key %s: public key is %d bytes, want %d", k.ID, len(k.PublicKey), ed25519.PublicKeySize)
		}
		verifiers[i] = noteVerifier{name: origin, hash: noteKeyHash(origin, k.PublicKey), key: k.PublicKey}
	}
	n, err := note.Open(signed, verifiers)
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

// strictBase64 refuses set bits after the last byte. It is made once
// because Strict returns a new copy of the encoding.
var strictBase64 = base64.StdEncoding.Strict()

// decodeBase64 decodes canonical standard base64 (re-encoding gives s back:
// no newlines, no stray bits) of exactly n bytes, or any length if n < 0.
func decodeBase64(s string, n int) ([]byte, error) {
	b, err := strictBase64.DecodeString(s)
	// Go's base64 decoders skip \r and \n; without them, a string that
	// decodes strictly is exactly as long as the encoding of its bytes.
	if err != nil || len(s) != base64.StdEncoding.EncodedLen(len(b)) {
		return nil, errors.New("not canonical standard base64")
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	return b, nil
}
