package ledgeropen

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/lethe-privacy/lethe/ledger"
)

// Environment variables that carry the subject salt.
const (
	EnvSalt     = "LETHE_SUBJECT_SALT"      // hex, at least 32 bytes
	EnvSaltFile = "LETHE_SUBJECT_SALT_FILE" // a file holding at least 32 bytes
)

// SubjectHasher is the hasher of the salt in the environment, for a
// command that needs one; its error says how to make and set a salt.
func SubjectHasher() (*ledger.Hasher, error) {
	salt, err := loadSalt()
	if err != nil {
		return nil, err
	}
	h, err := ledger.NewHasher(salt)
	if err != nil {
		return nil, fmt.Errorf("%w (from %s)", err, saltSource())
	}
	return h, nil
}

// OptionalSubjectHasher is SubjectHasher for commands that hash no subject
// (sweep, ledger counts): nil when no salt is set, so that they run
// without one and are refused a wrong one.
func OptionalSubjectHasher() (*ledger.Hasher, error) {
	if os.Getenv(EnvSalt) == "" && os.Getenv(EnvSaltFile) == "" {
		return nil, nil
	}
	return SubjectHasher()
}

func loadSalt() ([]byte, error) {
	if v := os.Getenv(EnvSalt); v != "" {
		salt, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil {
			// Not err: hex's message quotes the offending character of the secret.
			return nil, fmt.Errorf("%s is not hex digits (%d characters); give 64 hex digits, or the salt's file in %s", EnvSalt, len(strings.TrimSpace(v)), EnvSaltFile)
		}
		return salt, nil
	}
	if f := os.Getenv(EnvSaltFile); f != "" {
		salt, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvSaltFile, err)
		}
		return salt, nil
	}
	return nil, errors.New("capture is configured but no subject salt is set: create one once with " +
		"`[ -f /etc/lethe/salt ] || (umask 077 && head -c 32 /dev/urandom > /etc/lethe/salt)` and set " +
		EnvSaltFile + "=/etc/lethe/salt (or " + EnvSalt + " to 64 hex digits); keep it secret and never change it: " +
		"the ledger is bound to it, and refuses another")
}

// saltSource names where the salt was read from, for messages: the file's
// path, never the salt.
func saltSource() string {
	if os.Getenv(EnvSalt) != "" {
		return EnvSalt
	}
	return EnvSaltFile + "=" + os.Getenv(EnvSaltFile)
}
