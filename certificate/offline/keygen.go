package offline

import (
	"errors"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
)

// NewKey is a signing key GenerateKey wrote.
type NewKey struct {
	// KeyID names the key in certificates and in the trusted keys file.
	KeyID string
	// TrustedKeys is a complete trusted keys file holding the new key, for
	// the operator to publish.
	TrustedKeys []byte
}

// originError is GenerateKey's refusal of a log origin that a trusted
// keys file cannot hold; err says why.
type originError struct{ err error }

func (e *originError) Error() string { return e.err.Error() }
func (e *originError) Unwrap() error { return e.err }

// GenerateKey makes a new Ed25519 signing key, writes it to path (PKCS#8
// PEM, mode 0600) and returns the trusted keys file for it, valid from now,
// for the transparency log named origin (forget.log_origin; a name the
// keys file cannot hold is an error IsOriginError). It never
// overwrites a file: an existing path is an error that errors.Is
// fs.ErrExist, since it may be the key certificates are signed with.
func GenerateKey(path, origin string) (NewKey, error) {
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		return NewKey{}, err
	}
	set, err := certificate.NewKeySet(origin, signer.TrustedKey(time.Now()))
	if err != nil {
		return NewKey{}, &originError{err: err}
	}
	setJSON, err := set.MarshalJSON()
	if err != nil {
		return NewKey{}, err
	}
	pem, err := signer.MarshalPrivateKey()
	if err != nil {
		return NewKey{}, err
	}
	if err := writeNewFile(path, pem); err != nil {
		return NewKey{}, err
	}
	return NewKey{KeyID: signer.KeyID(), TrustedKeys: setJSON}, nil
}

// IsOriginError says whether err is GenerateKey's refusal of the origin.
func IsOriginError(err error) bool {
	var oe *originError
	return errors.As(err, &oe)
}
