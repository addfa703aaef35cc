package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadOffline_OpensNoFileTheConfigurationNames(t *testing.T) {
	src := "postgres:\n  upstream: db:5432\n  upstream_tls: verify-full\n  upstream_ca_file: ca.pem\n" +
		"  tls: {cert_file: cert.pem, key_file: key.pem}\n" +
		"capture:\n  store: \"host=db dbname=app user=lethe\"\n  tables: [{table: public.docs, id: id, subjects: [user_id]}]\n" +
		"pinecone:\n  indexes: [{name: docs, host: \"https://docs.example\", upstream_ca_file: pc-ca.pem, namespaces: [{namespace: \"*\", subjects: [user_id]}]}]\n" +
		"forget:\n  signing_key: lethe-signing.pem\n  trusted_keys: trusted-keys.json\n  admin: {tokens_file: tokens.json}\n"
	path := filepath.Join(t.TempDir(), "lethe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))

	_, err := Load(path)
	require.Error(t, err, "Load opens them, and none exists")
	for _, f := range []string{"ca.pem", "cert.pem", "key.pem", "pc-ca.pem", "lethe-signing.pem", "trusted-keys.json", "tokens.json"} {
		assert.Contains(t, err.Error(), f)
	}
	cfg, err := LoadOffline(path)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(filepath.Dir(path), "lethe-signing.pem"), cfg.Forget.SigningKey)

	// Everything else is still checked.
	require.NoError(t, os.WriteFile(path, []byte(src+"log: {level: loud}\n"), 0o600))
	_, err = LoadOffline(path)
	assert.ErrorContains(t, err, `"loud" is not one of debug, info, warn, error`)
}
