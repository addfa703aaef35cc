package main

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
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/ledger"
)

// saltFile writes a salt of 32 bytes of b to a file of dir and points
// LETHE_SUBJECT_SALT_FILE at it.
func useSaltFile(t *testing.T, dir string, b byte) []byte {
	salt := bytes.Repeat([]byte{b}, 32)
	path := filepath.Join(dir, "salt-"+hex.EncodeToString([]byte{b}))
	require.NoError(t, os.WriteFile(path, salt, 0o600))
	t.Setenv(ledgeropen.EnvSalt, "")
	t.Setenv(ledgeropen.EnvSaltFile, path)
	return salt
}

// ledgerSaltCheck is what the ledger file at path says of salt, read
// without writing.
func ledgerSaltCheck(t *testing.T, path string, salt []byte) ledger.SaltCheck {
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
	h, err := ledgeropen.SubjectHasher()
	require.NoError(t, err)
	l, _, err := ledgeropen.Open(store, "", ledger.Options{}, ledgeropen.Salt{Hasher: h, Record: record})
	if err == nil {
		l.Close()
	}
	return err
}

func TestOpenLedger_ReadingCommandsNeverRecordTheSalt(t *testing.T) {
	dir := t.TempDir()
	ledgerPath := filepath.Join(dir, "ledger.db")
	cfg := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("postgres: {upstream: 127.0.0.1:5432}\nlog: {level: error}\ncapture:\n  ledger: {sqlite: "+ledgerPath+"}\n"), 0o600))
	salt := useSaltFile(t, dir, 3)

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, ledgerCmd([]string{"counts", "--config", cfg}, strings.NewReader(""), &stdout, &stderr), stderr.String())
	require.Equal(t, 0, ledgerCmd([]string{"subject", "--config", cfg}, strings.NewReader("alice\n"), &stdout, &stderr), stderr.String())
	assert.Equal(t, ledger.SaltUnrecorded, ledgerSaltCheck(t, ledgerPath, salt))

	t.Setenv(ledgeropen.EnvSaltFile, "")
	require.Equal(t, 0, ledgerCmd([]string{"counts", "--config", cfg}, strings.NewReader(""), &stdout, &stderr), "counts needs no salt: %s", stderr.String())
}

func TestLedgerCmd_AnotherSaltIsRefused(t *testing.T) {
	dir := t.TempDir()
	ledgerPath := filepath.Join(dir, "ledger.db")
	cfg := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("postgres: {upstream: 127.0.0.1:5432}\nlog: {level: error}\ncapture:\n  ledger: {sqlite: "+ledgerPath+"}\n"), 0o600))
	useSaltFile(t, dir, 4)
	require.NoError(t, openWithEnvSalt(t, config.LedgerStore{SQLite: ledgerPath}, true))

	useSaltFile(t, dir, 5)
	for _, args := range [][]string{{"subject", "--config", cfg}, {"counts", "--config", cfg}} {
		var stdout, stderr bytes.Buffer
		code := ledgerCmd(args, strings.NewReader("alice\n"), &stdout, &stderr)
		assert.Equal(t, 1, code, args[0])
		assert.Contains(t, stderr.String(), "was written with another subject salt", args[0])
		assert.Empty(t, stdout.String(), args[0])
	}
}
