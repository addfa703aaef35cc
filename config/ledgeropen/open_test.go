package ledgeropen

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// useSaltFile writes a salt of 32 bytes of b to a file of dir and points
// LETHE_SUBJECT_SALT_FILE at it.
func useSaltFile(t *testing.T, dir string, b byte) []byte {
	salt := bytes.Repeat([]byte{b}, 32)
	path := filepath.Join(dir, "salt-"+hex.EncodeToString([]byte{b}))
	require.NoError(t, os.WriteFile(path, salt, 0o600))
	t.Setenv(EnvSalt, "")
	t.Setenv(EnvSaltFile, path)
	return salt
}

// saltCheck is what the ledger file at path says of salt, read without
// writing.
func saltCheck(t *testing.T, path string, salt []byte) ledger.SaltCheck {
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(salt)
	require.NoError(t, err)
	check, err := l.CheckSalt(context.Background(), h)
	require.NoError(t, err)
	return check
}

func openWithEnvSalt(t *testing.T, store config.LedgerStore, record bool) error {
	h, err := SubjectHasher()
	require.NoError(t, err)
	l, _, err := Open(store, "", ledger.Options{}, Salt{Hasher: h, Record: record})
	if err == nil {
		l.Close()
	}
	return err
}

func TestOpen_AnotherSaltIsRefusedNamingTheLedgerAndTheRecovery(t *testing.T) {
	dir := t.TempDir()
	store := config.LedgerStore{SQLite: filepath.Join(dir, "ledger.db")}
	first := useSaltFile(t, dir, 1)
	require.NoError(t, openWithEnvSalt(t, store, true))

	other := useSaltFile(t, dir, 2)
	for _, record := range []bool{true, false} {
		err := openWithEnvSalt(t, store, record)
		require.ErrorIs(t, err, ledger.ErrSaltMismatch)
		msg := err.Error()
		assert.Contains(t, msg, store.SQLite, "names the ledger")
		assert.Contains(t, msg, "another subject salt")
		assert.Contains(t, msg, os.Getenv(EnvSaltFile), "names where the salt was read from")
		assert.Contains(t, msg, "Point LETHE_SUBJECT_SALT_FILE (or LETHE_SUBJECT_SALT) at the salt this ledger was written with")
		assert.Contains(t, msg, "point capture.ledger at a new ledger")
		assert.NotContains(t, msg, hex.EncodeToString(other[:4]), "never the salt")
	}
	assert.Equal(t, ledger.SaltMatched, saltCheck(t, store.SQLite, first), "the refused salt changed nothing")

	useSaltFile(t, dir, 1)
	require.NoError(t, openWithEnvSalt(t, store, true), "the original salt opens it again")
}

func TestOpen_CompareOnlyRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	store := config.LedgerStore{SQLite: filepath.Join(dir, "ledger.db")}
	salt := useSaltFile(t, dir, 3)
	require.NoError(t, openWithEnvSalt(t, store, false))
	assert.Equal(t, ledger.SaltUnrecorded, saltCheck(t, store.SQLite, salt))
	require.NoError(t, openWithEnvSalt(t, store, true))
	assert.Equal(t, ledger.SaltMatched, saltCheck(t, store.SQLite, salt))
}

func TestLocation_DefaultFileBesideTheConfiguration(t *testing.T) {
	assert.Equal(t, ledger.Location{SQLite: filepath.Join("/etc/lethe", DefaultFile)}, Location(config.LedgerStore{}, "/etc/lethe/lethe.yaml"))
	assert.Equal(t, ledger.Location{SQLite: "/var/lib/l.db"}, Location(config.LedgerStore{SQLite: "/var/lib/l.db"}, "/etc/lethe/lethe.yaml"))
	assert.Equal(t, ledger.Location{Postgres: "postgres://db/ledger"}, Location(config.LedgerStore{Postgres: "postgres://db/ledger"}, "/etc/lethe/lethe.yaml"))
}

func TestOptionalSubjectHasher_NilWithoutASalt(t *testing.T) {
	t.Setenv(EnvSalt, "")
	t.Setenv(EnvSaltFile, "")
	h, err := OptionalSubjectHasher()
	require.NoError(t, err)
	assert.Nil(t, h)
	_, err = SubjectHasher()
	require.ErrorContains(t, err, "no subject salt is set")
}

// The start-up error is logged: it must not quote any of the secret salt.
func TestLoadSalt_BadHexDoesNotQuoteTheSecret(t *testing.T) {
	t.Setenv(EnvSaltFile, "")
	t.Setenv(EnvSalt, strings.Repeat("ab", 31)+"qx")
	_, err := loadSalt()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give 64 hex digits")
	assert.NotContains(t, err.Error(), "q")
	assert.NotContains(t, err.Error(), "U+0071")
}
