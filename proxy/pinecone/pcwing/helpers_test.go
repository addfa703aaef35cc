package pcwing

import (
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// startEmulator runs a Pinecone emulator made with cfg until the test
// ends and returns its URL.
func startEmulator(t *testing.T, cfg emulator.Config) string {
	t.Helper()
	srv := emulator.New(cfg)
	url, err := srv.Start("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return url
}

// parse compiles a configuration file's text as the commands load it.
func parse(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("lethe.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newWing is New(cfg, nil, nil) reading API keys from env instead of the
// process's environment.
func newWing(t *testing.T, cfg *config.Config, env map[string]string) *Wing {
	t.Helper()
	w := New(cfg, nil, nil)
	if w == nil {
		t.Fatal("no wing for a config with a Pinecone index")
	}
	w.getenv = func(k string) string { return env[k] }
	t.Cleanup(w.Close)
	return w
}
