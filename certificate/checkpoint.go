package certificate

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/translog"
)

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

// isNoteName is the signed-note rule for names, as note.NewVerifier applies
// it: not empty, UTF-8, no plus sign and no Unicode White_Space (what
// unicode.IsSpace reports: U+0009–U+000D, U+0020, U+0085, U+00A0, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), and also no
// other control character U+0000–U+001F, which no note may hold (so a
// log_origin with one could name no checkpoint). U+007F and U+0080–U+009F
// other than U+0085 are allowed, as golang.org/x/mod/sumdb/note allows them.
func isNoteName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, isSpaceOrControl) < 0 && !strings.Contains(name, "+")
}

func isSpaceOrControl(r rune) bool { return r < 0x20 || unicode.IsSpace(r) }

// OpenCheckpoint verifies a signed checkpoint of the log keys.LogOrigin()
// against keys and parses it: the rules of docs/certificate.md
// ("Transparency log") with every trusted key allowed to vouch. Its Note
// is signed, verbatim.
func OpenCheckpoint(signed []byte, keys KeySet) (translog.Checkpoint, error) {
	c, err := openCheckpoint(string(signed), keys, func(TrustedKey) bool { return true })
	if err != nil {
		return translog.Checkpoint{}, err
	}
	c.Note = bytes.Clone(signed)
	return c, nil
}

// openCheckpoint verifies a checkpoint: its origin is the trusted log's,
// every signature line by a trusted key verifies (a bad one means the
// note was tampered with or the key misused, whichever line comes first),
// and at least one of them is by a key that may vouch for it.
func openCheckpoint(signed string, keys KeySet, mayVouch func(TrustedKey) bool) (translog.Checkpoint, error) {
	text, sigs, err := splitNote(signed)
	if err != nil {
		return translog.Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	origin, _, _ := strings.Cut(text, "\n")
	if origin != keys.origin {
		return translog.Checkpoint{}, fmt.Errorf("the checkpoint is of log %q, but the trusted keys are for log %q", origin, keys.origin)
	}
	vouched := false
	for _, sig := range sigs {
		if sig.name != origin {
			continue // a witness's cosignature, say
		}
		var signer *TrustedKey
		for i := range keys.keys {
			if k := &keys.keys[i]; noteKeyHash(origin, k.PublicKey) == sig.hash {
				if signer != nil {
					return translog.Checkpoint{}, fmt.Errorf("trusted keys %s and %s share the signed-note key hash %08x; a line by either cannot be told apart", signer.ID, k.ID, sig.hash)
				}
				signer = k
			}
		}
		if signer == nil {
			continue // a key we do not trust under the log's name: it proves nothing either way
		}
		if !ed25519.Verify(signer.PublicKey, []byte(text), sig.sig) {
			return translog.Checkpoint{}, fmt.Errorf("a signature line of the checkpoint of %q by trusted key %s does not verify: the checkpoint was altered, or the key misused", origin, signer.ID)
		}
		vouched = vouched || mayVouch(*signer)
	}
	if !vouched {
		return translog.Checkpoint{}, fmt.Errorf("checkpoint of %q is not signed by a trusted key that could have signed it", origin)
	}
	return translog.ParseCheckpointText(text)
}

// A noteSignature is one signature line of a signed note.
type noteSignature struct {
	name string
	hash uint32 // the key hash, the first 4 bytes of the decoded signature
	sig  []byte // the rest
}

// maxNoteSignatures bounds the work a note can ask for, as
// golang.org/x/mod/sumdb/note does.
const maxNoteSignatures = 100

// splitNote splits a C2SP signed note into its text and signature lines,
// with the structural rules of golang.org/x/mod/sumdb/note's Open: UTF-8
// without control characters other than newline; the text ends at the
// last blank line; each signature line is "— <name> <base64>" with a
// valid key name and at least 5 decoded bytes; at most 100 of them.
func splitNote(msg string) (string, []noteSignature, error) {
	if !utf8.ValidString(msg) {
		return "", nil, errors.New("not UTF-8")
	}
	for i := 0; i < len(msg); i++ {
		if msg[i] < 0x20 && msg[i] != '\n' {
			return "", nil, errors.New("control character in a signed note")
		}
	}
	split := strings.LastIndex(msg, "\n\n")
	if split < 0 {
		return "", nil, errors.New("no signature block after a blank line; want a signed note")
	}
	text, block := msg[:split+1], msg[split+2:]
	if block == "" || !strings.HasSuffix(block, "\n") {
		return "", nil, errors.New("the signature block does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	if len(lines) > maxNoteSignatures {
		return "", nil, fmt.Errorf("%d signature lines; at most %d are read", len(lines), maxNoteSignatures)
	}
	sigs := make([]noteSignature, len(lines))
	for i, line := range lines {
		rest, ok := strings.CutPrefix(line, "— ")
		name, b64, _ := strings.Cut(rest, " ")
		// Canonical base64 only, as everywhere in a certificate: a lenient
		// decoder reads stray bits away, a strict one refuses the line.
		raw, err := translog.DecodeBase64(b64, -1)
		if !ok || err != nil || !isNoteName(name) || b64 == "" || len(raw) < 5 {
			return "", nil, fmt.Errorf("signature line %d is not \"— <name> <canonical base64 of key hash and signature>\"", i+1)
		}
		sigs[i] = noteSignature{name: name, hash: binary.BigEndian.Uint32(raw), sig: raw[4:]}
	}
	return text, sigs, nil
}
