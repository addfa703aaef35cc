package certificate

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"time"
)

// KeyID returns the id certificates name a key by:
// "ed25519:" + hex of the first 16 bytes of SHA-256(public key).
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:16])
}

// A Signer is the operator's Ed25519 key. It signs certificates (Sign) and
// log checkpoints (NoteSigner, which the transparency log signs with).
type Signer struct {
	id  string
	key ed25519.PrivateKey
}

// NewSigner wraps an Ed25519 private key.
func NewSigner(key ed25519.PrivateKey) (*Signer, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("certificate: Ed25519 private key is %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	return &Signer{id: KeyID(key.Public().(ed25519.PublicKey)), key: key}, nil
}

// GenerateKey makes a new operator key from rand (crypto/rand.Reader if nil).
func GenerateKey(rand io.Reader) (*Signer, error) {
	_, key, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("certificate: generating key: %w", err)
	}
	return NewSigner(key)
}

// LoadPrivateKey reads a PKCS#8 PEM Ed25519 private key, as written by
// MarshalPrivateKey (and `lethe-proxy keygen`).
func LoadPrivateKey(pemBytes []byte) (*Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("certificate: no \"PRIVATE KEY\" PEM block; give the file written by `lethe-proxy keygen`")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certificate: reading PKCS#8 private key: %w", err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("certificate: private key is %T; Lethe signs with Ed25519 only", k)
	}
	return NewSigner(key)
}

// MarshalPrivateKey returns the key as PKCS#8 PEM, which Go, Node and
// OpenSSL all read.
func (s *Signer) MarshalPrivateKey() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		return nil, fmt.Errorf("certificate: encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// KeyID returns the id of the signer's public key.
func (s *Signer) KeyID() string { return s.id }

// Public returns the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// TrustedKey returns the entry verifiers need to trust this signer from
// notBefore on, with no end.
func (s *Signer) TrustedKey(notBefore time.Time) TrustedKey {
	return TrustedKey{ID: s.id, PublicKey: s.Public(), NotBefore: notBefore.UTC().Truncate(time.Second)}
}

// A TrustedKey is one entry of a trusted keys file: a public key and the
// window of issued_at times in which it vouches for certificates.
type TrustedKey struct {
	ID        string
	PublicKey ed25519.PublicKey
	NotBefore time.Time
	NotAfter  time.Time // zero: no end
}

// Covers reports whether a certificate issued at t may be signed by k:
// NotBefore <= t <= NotAfter, both ends included.
func (k TrustedKey) Covers(t time.Time) bool {
	return !t.Before(k.NotBefore) && (k.NotAfter.IsZero() || !t.After(k.NotAfter))
}

// MarshalJSON writes k as an entry of the trusted keys file.
func (k TrustedKey) MarshalJSON() ([]byte, error) {
	e := struct {
		KeyID     string     `json:"key_id"`
		PublicKey string     `json:"public_key"`
		NotBefore time.Time  `json:"not_before"`
		NotAfter  *time.Time `json:"not_after,omitempty"`
	}{KeyID: k.ID, PublicKey: base64.StdEncoding.EncodeToString(k.PublicKey), NotBefore: k.NotBefore}
	if !k.NotAfter.IsZero() {
		e.NotAfter = &k.NotAfter
	}
	return json.Marshal(e)
}

// A KeySet is what a verifier trusts: the operator's transparency log,
// named by its origin, and the keys that sign its certificates and
// checkpoints, current and retired.
type KeySet struct {
	origin string
	keys   []TrustedKey
}

// NewKeySet checks the log origin (a signed-note name) and the keys (ids
// derived from the keys, no duplicates, sane windows, no weak keys) and
// returns them as a set.
func NewKeySet(logOrigin string, keys ...TrustedKey) (KeySet, error) {
	if !isNoteName(logOrigin) {
		return KeySet{}, fmt.Errorf("certificate: trusted keys: log origin %q is not a log name (non-empty, no spaces, no '+'); use forget.log_origin of the proxy's configuration", logOrigin)
	}
	if len(keys) == 0 {
		return KeySet{}, errors.New("certificate: trusted keys: the set is empty; add the operator's key entry (printed by `lethe-proxy keygen`)")
	}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if len(k.PublicKey) != ed25519.PublicKeySize {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d (%s): public_key is %d bytes, want %d", i+1, k.ID, len(k.PublicKey), ed25519.PublicKeySize)
		}
		if why := weakPublicKey(k.PublicKey); why != "" {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d (%s): public_key %s; no operator key is, so the file is wrong or forged", i+1, k.ID, why)
		}
		if want := KeyID(k.PublicKey); k.ID != want {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d: key_id %q does not match its public_key, whose id is %q; fix the entry", i+1, k.ID, want)
		}
		if seen[k.ID] {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d: %s is listed twice; keep one entry per key", i+1, k.ID)
		}
		seen[k.ID] = true
		if !k.NotAfter.IsZero() && k.NotAfter.Before(k.NotBefore) {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d (%s): not_after is before not_before", i+1, k.ID)
		}
	}
	return KeySet{origin: logOrigin, keys: append([]TrustedKey(nil), keys...)}, nil
}

// LogOrigin is the origin of the log whose checkpoints the set trusts.
func (s KeySet) LogOrigin() string { return s.origin }

// MarshalJSON writes the set as a trusted keys file.
func (s KeySet) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		LogOrigin string       `json:"log_origin"`
		Keys      []TrustedKey `json:"keys"`
	}{s.origin, nonNil(s.keys)})
}

// Lookup returns the trusted key with the given id.
func (s KeySet) Lookup(id string) (TrustedKey, bool) {
	for _, k := range s.keys {
		if k.ID == id {
			return k, true
		}
	}
	return TrustedKey{}, false
}
