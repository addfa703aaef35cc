package certificate

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// commitmentDomain separates subject commitments from every other SHA-256
// use of the same bytes.
const commitmentDomain = "lethe-subject-commitment-v1\x00"

// NewCommitment commits to subject with a fresh 32-byte secret. The
// commitment goes into the certificate; the secret goes only to the data
// subject, who can then recognise the certificate (CheckCommitment) while
// nobody else learns whom it is about.
func NewCommitment(subject string) (secret [32]byte, commitment string) {
	rand.Read(secret[:]) // never fails since Go 1.24: it crashes the program instead
	return secret, commit(subject, secret[:])
}

// CheckCommitment reports whether commitment was made for subject with secret.
func CheckCommitment(subject string, secret []byte, commitment string) bool {
	if len(secret) != 32 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(commit(subject, secret)), []byte(commitment)) == 1
}

// commit is hex(SHA-256(domain || secret || subject)); the secret has a
// fixed length, so the concatenation is unambiguous.
func commit(subject string, secret []byte) string {
	h := sha256.New()
	h.Write([]byte(commitmentDomain))
	h.Write(secret)
	h.Write([]byte(subject))
	return hex.EncodeToString(h.Sum(nil))
}
