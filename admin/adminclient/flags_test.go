package adminclient

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parsedFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	return f
}

// --admin wins over the environment; --token-file over $LETHE_ADMIN_TOKEN.
func TestFlags_AdminAndTokenFileWinOverTheEnvironment(t *testing.T) {
	t.Setenv(EnvURL, "http://127.0.0.1:1")
	t.Setenv(EnvToken, "from-env")
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("from-file\n"), 0o600))
	c, err := parsedFlags(t, "--admin", "http://127.0.0.1:2", "--token-file", tokenFile).Client()
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:2", c.base)
	assert.Equal(t, "from-file", c.token)

	c, err = parsedFlags(t).Client()
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:1", c.base)
	assert.Equal(t, "from-env", c.token)
}

// --config is read for forget.admin when neither --admin nor the
// environment names the API.
func TestFlags_ConfigNamesTheAPIWhenNothingElseDoes(t *testing.T) {
	t.Setenv(EnvURL, "")
	path := filepath.Join(t.TempDir(), "lethe.yaml")
	require.NoError(t, os.WriteFile(path, []byte("postgres: {upstream: \"db.internal:5432\"}\ncapture:\n  store: \"postgres://lethe:pw@db.internal:5432/app\"\n"+
		"  tables:\n    - {table: public.docs, id: id, subjects: [user_id]}\n"+
		"forget:\n  signing_key: key.pem\n  admin:\n    tokens_file: tokens.json\n    listen: admin.internal:7171\n"), 0o600))
	u, err := parsedFlags(t, "--config", path).URL()
	require.NoError(t, err)
	assert.Equal(t, "http://admin.internal:7171", u)
	u, err = parsedFlags(t).URL()
	require.NoError(t, err)
	assert.Equal(t, DefaultURL, u)
}
