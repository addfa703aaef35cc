package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Errors of the confirm token, each a reason to refuse the forget.
var (
	ErrTokenMalformed = errors.New("engine: the confirm token is malformed; run preview again")
	ErrTokenExpired   = errors.New("engine: the confirm token has expired; run preview again")
	ErrTokenSubject   = errors.New("engine: the confirm token was issued for another subject")
	ErrTokenStale     = errors.New("engine: the data changed since preview; run preview again and confirm the new counts")
	ErrTokenUsed      = errors.New("engine: the confirm token was already used (see the existing request)")
)

const tokenVersion = 1

// token is what a confirm token binds: the subject, the preview's counts
// and an expiry. It is stateless (a MAC with a key derived from the salt),
// so that any engine sharing the ledger accepts it; single use is enforced
// by the journal, which keeps the hash of every token used.
type token struct {
	subject ledger.SubjectHash
	counts  [32]byte
	expires time.Time
}

// tokenLen: version, subject, counts digest, expiry, nonce, MAC.
const tokenLen = 1 + 32 + 32 + 8 + 16 + 32

func (t token) seal(key []byte) string {
	b := make([]byte, 0, tokenLen)
	b = append(b, tokenVersion)
	b = append(b, t.subject[:]...)
	b = append(b, t.counts[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(t.expires.Unix()))
	var nonce [16]byte
	rand.Read(nonce[:])
	b = append(b, nonce[:]...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(m.Sum(b))
}

// openToken checks the token's MAC and expiry and returns what it binds.
func openToken(s string, key []byte, now time.Time) (token, [32]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != tokenLen || b[0] != tokenVersion {
		return token{}, [32]byte{}, ErrTokenMalformed
	}
	body, mac := b[:tokenLen-32], b[tokenLen-32:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return token{}, [32]byte{}, ErrTokenMalformed
	}
	var t token
	copy(t.subject[:], body[1:33])
	copy(t.counts[:], body[33:65])
	t.expires = time.Unix(int64(binary.BigEndian.Uint64(body[65:73])), 0)
	if !now.Before(t.expires) {
		return token{}, [32]byte{}, ErrTokenExpired
	}
	return t, sha256.Sum256([]byte(s)), nil
}
