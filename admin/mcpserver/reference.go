package mcpserver

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// A reference's kind is its prefix; the prefix is also the sealed data's
// additional data, so a secret's reference never opens as a subject's.
const (
	// KindSubject is a subject reference: the text of the person's
	// identifier, as preview, forget and reverify take it.
	KindSubject = "lsubj_"
	// KindSecret is a forget's subject secret, for the data subject only.
	KindSecret = "lsec_"
)

// MinKeyFileBytes is the least a reference key file must hold:
// `head -c 32 /dev/urandom > mcp-ref.key` makes one.
const MinKeyFileBytes = 32

// DefaultReferenceTTL is how long a reference opens: a month and a day,
// the time Art. 12(3) GDPR gives to answer an erasure request.
const DefaultReferenceTTL = 31 * 24 * time.Hour

// ErrReference is a reference that does not open: altered, of another
// kind, or sealed under another key.
var ErrReference = errors.New("mcpserver: the reference does not open")

// References seals values into opaque strings an agent can carry instead
// of the values: AES-256-GCM under a key from the reference key file, with
// the expiry inside the sealed data. Any replica given the same key file
// opens any replica's references, so the HTTP server stays stateless.
type References struct {
	aead cipher.AEAD
	ttl  time.Duration
	now  func() time.Time
}

// NewReferences seals under key (at least MinKeyFileBytes of random bytes,
// hashed into the AES key) for ttl (DefaultReferenceTTL if zero).
func NewReferences(key []byte, ttl time.Duration) (*References, error) {
	if len(key) < MinKeyFileBytes {
		return nil, fmt.Errorf("mcpserver: the reference key has %d bytes, want at least %d; make one with `head -c 32 /dev/urandom > mcp-ref.key`", len(key), MinKeyFileBytes)
	}
	if ttl <= 0 {
		ttl = DefaultReferenceTTL
	}
	sum := sha256.Sum256(append([]byte("lethe-mcp-reference-key-v1\x00"), key...))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &References{aead: aead, ttl: ttl, now: time.Now}, nil
}

// EphemeralReferences seals under a random key that lives as long as the
// process: references open only there.
func EphemeralReferences(ttl time.Duration) (*References, error) {
	key := make([]byte, MinKeyFileBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("mcpserver: reading random bytes for the reference key: %w", err)
	}
	return NewReferences(key, ttl)
}

// LoadReferenceKey reads a reference key file.
func LoadReferenceKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: reading the reference key file: %w", err)
	}
	if len(key) < MinKeyFileBytes {
		return nil, fmt.Errorf("mcpserver: the reference key file %s has %d bytes, want at least %d; make one with `head -c 32 /dev/urandom > %s`", path, len(key), MinKeyFileBytes, path)
	}
	return key, nil
}

// Seal returns the reference of value, of kind KindSubject or KindSecret.
func (r *References) Seal(kind, value string) string {
	nonce := make([]byte, r.aead.NonceSize())
	rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	plain := binary.BigEndian.AppendUint64(nil, uint64(r.now().Add(r.ttl).Unix()))
	plain = append(plain, value...)
	sealed := r.aead.Seal(nonce, nonce, plain, []byte(kind))
	return kind + base64.RawURLEncoding.EncodeToString(sealed)
}

// Open returns the value ref seals, if ref is a reference of kind sealed
// under this key and not expired. Its errors never quote ref or the value.
func (r *References) Open(kind, ref string) (string, error) {
	body, ok := strings.CutPrefix(strings.TrimSpace(ref), kind)
	if !ok {
		return "", fmt.Errorf("%w: it does not start with %q; pass the reference preview (or `lethe-proxy mcp ref`) gave", ErrReference, kind)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(sealed) < r.aead.NonceSize()+8+r.aead.Overhead() {
		return "", fmt.Errorf("%w: it is cut short or altered; pass it exactly as it was given", ErrReference)
	}
	nonce, box := sealed[:r.aead.NonceSize()], sealed[r.aead.NonceSize():]
	plain, err := r.aead.Open(nil, nonce, box, []byte(kind))
	if err != nil {
		return "", fmt.Errorf("%w: it was altered or sealed under another key (every replica of lethe-proxy mcp, and `lethe-proxy mcp ref`, needs the same --ref-key-file)", ErrReference)
	}
	expires := time.Unix(int64(binary.BigEndian.Uint64(plain[:8])), 0)
	if r.now().After(expires) {
		return "", fmt.Errorf("%w: it expired at %s; run preview again to get a fresh one", ErrReference, expires.UTC().Format(time.RFC3339))
	}
	return string(plain[8:]), nil
}

// LoadReferences seals under the key in keyFile (LoadReferenceKey) for
// ttl (DefaultReferenceTTL if zero).
func LoadReferences(keyFile string, ttl time.Duration) (*References, error) {
	key, err := LoadReferenceKey(keyFile)
	if err != nil {
		return nil, err
	}
	return NewReferences(key, ttl)
}

// OpenAny returns what ref seals, a forget's subject secret or a subject
// (lethe-proxy mcp open); when it opens as neither, the error is the
// subject kind's.
func (r *References) OpenAny(ref string) (string, error) {
	if value, err := r.Open(KindSecret, ref); err == nil {
		return value, nil
	}
	return r.Open(KindSubject, ref)
}
