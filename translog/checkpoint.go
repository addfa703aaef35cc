package translog

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a signed statement of the log's tree at one size
// (c2sp.org/tlog-checkpoint).
type Checkpoint struct {
	Origin string // the log's identity, and the name of the key that signs its checkpoints
	Size   int64  // number of records in the tree
	Root   Hash   // RFC 6962 root hash of the tree of Size records
	Note   []byte // the signed note, verbatim: what clients keep and exchange
}

var (
	// ErrMalformedCheckpoint reports a checkpoint that is not a signed
	// note or whose body does not start with origin, tree size and root
	// hash.
	ErrMalformedCheckpoint = errors.New("tlog: malformed checkpoint")
	// ErrUnverifiedCheckpoint reports a checkpoint that carries no valid
	// signature by the key named after its origin among the verifiers.
	ErrUnverifiedCheckpoint = errors.New("tlog: checkpoint not signed by the log's key")
)

// emptyRoot is the root hash of the empty tree, SHA-256 of the empty
// string (RFC 6962 section 2.1).
var emptyRoot = Hash(sha256.Sum256(nil))

// checkpointBody is the note text of a checkpoint.
func checkpointBody(origin string, size int64, root Hash) string {
	return origin + "\n" + strconv.FormatInt(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
}

// ParseCheckpoint verifies the signature on signedNote and parses its body.
// The note must carry a valid signature by a key among verifiers whose
// name is the checkpoint's origin; signatures by unknown keys (witnesses'
// cosignatures, say) are ignored, as the signed-note spec requires.
// Extension lines after the root hash are allowed and ignored.
func ParseCheckpoint(signedNote []byte, verifiers note.Verifiers) (Checkpoint, error) {
	n, err := note.Open(signedNote, verifiers)
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			return Checkpoint{}, fmt.Errorf("%w: no signature by a known key (signed by %s); check the log's public key", ErrUnverifiedCheckpoint, signerNames(unverified.Note.UnverifiedSigs))
		case errors.As(err, &invalid):
			return Checkpoint{}, fmt.Errorf("%w: the signature by %s+%08x does not match the text: the checkpoint was altered or forged", ErrUnverifiedCheckpoint, invalid.Name, invalid.Hash)
		}
		return Checkpoint{}, fmt.Errorf("%w: not a signed note: %w", ErrMalformedCheckpoint, err)
	}
	if err := checkCanonicalSignatures(signedNote); err != nil {
		return Checkpoint{}, err
	}
	c, err := parseCheckpointBody(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if !signedBy(n.Sigs, c.Origin) {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint of origin %q is signed only by %s", ErrUnverifiedCheckpoint, c.Origin, signerNames(n.Sigs))
	}
	c.Note = bytes.Clone(signedNote)
	return c, nil
}

// parseStoredCheckpoint parses a checkpoint read back from the log's own
// storage, without verifying its signature: the Log holds a signer, not a
// verifier, and only needs the body to check consistency.
func parseStoredCheckpoint(signedNote []byte) (Checkpoint, error) {
	_, err := note.Open(signedNote, note.VerifierList())
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return Checkpoint{}, fmt.Errorf("%w: stored checkpoint is not a signed note", ErrMalformedCheckpoint)
	}
	c, err := parseCheckpointBody(unverified.Note.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	c.Note = bytes.Clone(signedNote)
	return c, nil
}

// parseCheckpointBody parses the text of a checkpoint note with the one
// checkpoint parser verifiers use too (ParseCheckpointText),
// so the log and its clients read a checkpoint alike: extension lines are
// signed and ignored, as C2SP tlog-checkpoint asks of clients.
func parseCheckpointBody(text string) (Checkpoint, error) {
	c, err := ParseCheckpointText(text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrMalformedCheckpoint, err)
	}
	return Checkpoint{Origin: c.Origin, Size: c.Size, Root: Hash(c.Root)}, nil
}

// checkCanonicalSignatures refuses signature lines whose base64 is not
// canonical: note.Open decodes stray bits after the last byte away, and
// certificate verifiers refuse them (docs/certificate.md, "Transparency
// log"), so a client of the log reads a checkpoint as they do.
func checkCanonicalSignatures(signedNote []byte) error {
	msg := string(signedNote)
	block := msg[strings.LastIndex(msg, "\n\n")+2:] // note.Open found the blank line
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		b64 := line[strings.LastIndexByte(line, ' ')+1:]
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || base64.StdEncoding.EncodeToString(raw) != b64 {
			return fmt.Errorf("%w: signature line %.60q is not canonical base64", ErrMalformedCheckpoint, line)
		}
	}
	return nil
}

func signedBy(sigs []note.Signature, name string) bool {
	for _, s := range sigs {
		if s.Name == name {
			return true
		}
	}
	return false
}

func signerNames(sigs []note.Signature) string {
	if len(sigs) == 0 {
		return "no one"
	}
	names := make([]string, len(sigs))
	for i, s := range sigs {
		names[i] = fmt.Sprintf("%s+%08x", s.Name, s.Hash)
	}
	return strings.Join(names, ", ")
}
