package certificate

import (
	"github.com/lethe-privacy/lethe/translog"

	"crypto/ed25519"
	"fmt"
	"os"
	"time"
)

// The members of a trusted keys file (docs/certificate.md, "Keys"), read
// with the same strict JSON reader as certificates: exact names, no
// repeats, no unknown members, no null.
var (
	keysFileMembers = []string{"log_origin", "keys"}
	keyEntryMembers = []string{"key_id", "public_key", "not_before", "not_after"}
)

// earliestKeyTime bounds the times of a keys file from below, so that no
// written time is Go's zero time, which TrustedKey reads as "no end".
var earliestKeyTime = time.Unix(0, 0).UTC()

// ReadKeySet reads and parses the trusted keys file at path, the one way
// every reader of an operator's published keys (verify, log verify, forget
// run, mcp, forget.trusted_keys) loads them. Its errors name the file and
// say what to fix; one that could not be read wraps the os error, so
// errors.Is(err, fs.ErrNotExist) tells a missing file.
func ReadKeySet(path string) (KeySet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return KeySet{}, fmt.Errorf("certificate: reading the trusted keys file: %w; give the path of the keys file the operator publishes (lethe-proxy keygen prints one)", err)
	}
	keys, err := ParseKeySet(data)
	if err != nil {
		return KeySet{}, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// ParseKeySet reads a trusted keys file:
// {"log_origin", "keys": [{"key_id", "public_key" (base64), "not_before", "not_after"?}]}.
func ParseKeySet(data []byte) (KeySet, error) {
	const want = `; want {"log_origin":…,"keys":[{"key_id":…,"public_key":…,"not_before":…}]}, as lethe-proxy keygen prints it`
	r, err := newJSONReader(string(data), 32)
	if err != nil {
		return KeySet{}, fmt.Errorf("certificate: trusted keys: %w%s", err, want)
	}
	f := r.fields(0, keysFileMembers)
	origin := r.str(r.get(&f, 0))
	type entry struct {
		TrustedKey
		publicKey   string
		hasNotAfter bool
	}
	entries := readArray(&r, r.get(&f, 1), func(t int32) (e entry) {
		k, ok := r.object(t, keyEntryMembers)
		if !ok {
			return e
		}
		e.ID = r.str(r.get(&k, 0))
		e.publicKey = r.str(r.get(&k, 1))
		e.NotBefore = r.time(r.get(&k, 2))
		if e.hasNotAfter = k.vals[3] != 0; e.hasNotAfter { // optional; absent is no end
			e.NotAfter = r.time(k.vals[3])
		}
		r.done(&k)
		return e
	})
	r.done(&f)
	if _, why := r.verdict(); why != "" {
		return KeySet{}, fmt.Errorf("certificate: trusted keys: %s%s", why, want)
	}
	keys := make([]TrustedKey, len(entries))
	for i, e := range entries {
		pub, err := translog.DecodeBase64(e.publicKey, ed25519.PublicKeySize)
		if err != nil {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d (%s): public_key: %w", i+1, e.ID, err)
		}
		if e.NotBefore.Before(earliestKeyTime) || e.hasNotAfter && e.NotAfter.Before(earliestKeyTime) {
			return KeySet{}, fmt.Errorf("certificate: trusted key %d (%s): not_before and not_after are no earlier than 1970-01-01T00:00:00Z", i+1, e.ID)
		}
		e.PublicKey = pub
		keys[i] = e.TrustedKey
	}
	return NewKeySet(origin, keys...)
}
