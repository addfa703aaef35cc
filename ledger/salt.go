package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// SaltFingerprint is a keyed fingerprint of a subject salt:
// HMAC-SHA256(salt, saltFingerprintMessage). The ledger keeps it so that a
// proxy started with another salt is refused instead of writing tags and
// reading tombstones that no earlier subject hash matches. The salt cannot
// be recovered from it (HMAC is a pseudorandom function of its key), and
// two salts give two fingerprints.
type SaltFingerprint [32]byte

// saltFingerprintMessage is what the fingerprint is the HMAC of. Subjects
// are hashed with the same key, so it must be a string no application
// would use as a subject; the version suffix lets a later scheme coexist.
const saltFingerprintMessage = "lethe subject salt fingerprint v1"

// Short is the first 8 hex digits, enough for an operator to tell salts
// apart in an error message.
func (f SaltFingerprint) Short() string { return hex.EncodeToString(f[:4]) }

// SaltFingerprint returns the fingerprint of h's salt.
func (h *Hasher) SaltFingerprint() SaltFingerprint {
	m := hmac.New(sha256.New, h.salt)
	m.Write([]byte(saltFingerprintMessage))
	var out SaltFingerprint
	m.Sum(out[:0])
	return out
}

// ErrSaltMismatch is returned when a ledger was written with another
// subject salt than the one it is opened with.
var ErrSaltMismatch = errors.New("ledger: the subject salt differs from the one this ledger was written with")

// SaltMismatchError is the ErrSaltMismatch a ledger returns: the two
// fingerprints, for the operator to tell which salt file is the ledger's.
type SaltMismatchError struct {
	Ledger, Given SaltFingerprint
}

func (e *SaltMismatchError) Error() string {
	return fmt.Sprintf("%v (the ledger's salt fingerprint starts %s, this salt's %s)", ErrSaltMismatch, e.Ledger.Short(), e.Given.Short())
}

func (e *SaltMismatchError) Is(target error) bool { return target == ErrSaltMismatch }

// SaltCheck is what a ledger found when asked about a salt.
type SaltCheck int

const (
	// SaltMatched: the ledger holds this salt's fingerprint.
	SaltMatched SaltCheck = iota + 1
	// SaltRecorded: the ledger held no fingerprint and no record; this
	// salt's fingerprint is now recorded (a new ledger).
	SaltRecorded
	// SaltRecordedOnExisting: the ledger held records but no fingerprint
	// (it was written by a release that kept none); this salt's
	// fingerprint is now recorded. Whether the records were written with
	// this salt cannot be told: the caller should say so.
	SaltRecordedOnExisting
	// SaltUnrecorded: the ledger holds no fingerprint and CheckSalt wrote
	// none; nothing could be compared.
	SaltUnrecorded
)

// SaltKeeper keeps the fingerprint of the subject salt a ledger is
// written with. Both backends implement it.
type SaltKeeper interface {
	// RecordSalt compares h's salt with the ledger's fingerprint and, when
	// the ledger holds none, records h's. It returns a *SaltMismatchError
	// (errors.Is ErrSaltMismatch) when the ledger's fingerprint is
	// another salt's, and writes nothing then. Commands that write subject
	// hashes call it at open; concurrent calls record one fingerprint.
	RecordSalt(ctx context.Context, h *Hasher) (SaltCheck, error)
	// CheckSalt is RecordSalt without the write: SaltUnrecorded when the
	// ledger holds no fingerprint. Commands that only read call it.
	CheckSalt(ctx context.Context, h *Hasher) (SaltCheck, error)
}

var (
	_ SaltKeeper = (*SQLite)(nil)
	_ SaltKeeper = (*Postgres)(nil)
)

// compareSalt is the answer for a ledger holding stored (nil: none) and a
// caller with given.
func compareSalt(stored []byte, given SaltFingerprint) (SaltCheck, error) {
	if stored == nil {
		return SaltUnrecorded, nil
	}
	if len(stored) != len(given) {
		return 0, fmt.Errorf("ledger: the stored subject salt fingerprint is %d bytes, not %d: the ledger is damaged", len(stored), len(given))
	}
	if !hmac.Equal(stored, given[:]) {
		return 0, &SaltMismatchError{Ledger: SaltFingerprint(stored), Given: given}
	}
	return SaltMatched, nil
}
