package adminclient

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveURL_FlagThenEnvironmentThenConfigThenDefault(t *testing.T) {
	dir := t.TempDir()
	write := func(name, yaml string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
		return path
	}
	base := "postgres: {upstream: \"db.internal:5432\"}\ncapture:\n  store: \"postgres://lethe:pw@db.internal:5432/app\"\n" +
		"  tables:\n    - {table: public.docs, id: id, subjects: [\"cmetadata->>'user_id'\"]}\n"
	forget := base + "forget:\n  signing_key: key.pem\n  admin:\n    tokens_file: tokens.json\n"
	tlsOnWildcard := write("tls.yaml", forget+"    listen: 0.0.0.0:7443\n    tls: {cert_file: admin.crt, key_file: admin.key}\n")
	plainOnHost := write("plain.yaml", forget+"    listen: admin.internal:7071\n")
	v6Wildcard := write("v6.yaml", forget+"    listen: '[::]:7072'\n")
	noForget := write("noforget.yaml", base)

	for _, tt := range []struct {
		name, flag, env, config, want string
	}{
		{"the flag wins", "http://flag:1", "http://env:2", tlsOnWildcard, "http://flag:1"},
		{"then the environment", "", "http://env:2", tlsOnWildcard, "http://env:2"},
		{"then the config, TLS on a wildcard address", "", "", tlsOnWildcard, "https://127.0.0.1:7443"},
		{"a named host as it is", "", "", plainOnHost, "http://admin.internal:7071"},
		{"an IPv6 wildcard on IPv6 loopback", "", "", v6Wildcard, "http://[::1]:7072"},
		{"a config without forget: the default address", "", "", noForget, DefaultURL},
		{"nothing given", "", "", "", DefaultURL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvURL, tt.env)
			got, err := ResolveURL(tt.flag, tt.config)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Setenv(EnvURL, "")
	_, err := ResolveURL("", write("bad.yaml", "forget: [\n"))
	require.ErrorContains(t, err, "reading the admin API's address from --config")
}
