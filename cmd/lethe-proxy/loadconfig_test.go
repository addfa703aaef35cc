package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configCommands are the subcommands that read --config, with the
// arguments that come before it.
var configCommands = [][]string{
	{"serve"}, {"check"}, {"ledger", "counts"}, {"wal", "status"}, {"sweep"}, {"reconcile"}, {"export"},
}

func TestConfigCommands_UnusableConfigExitsTwoWithTheErrorAndNoUsage(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	require.NoError(t, os.WriteFile(invalid, []byte("postgres: {upstream: \"db:5432\"}\ncapture: {mode: loose}\n"), 0o600))
	for _, cmd := range configCommands {
		for _, c := range []struct{ file, want string }{
			{invalid, `invalid.yaml:2: capture.mode: "loose" is not one of strict, permissive`},
			{filepath.Join(dir, "absent.yaml"), "lethe: reading config: open " + filepath.Join(dir, "absent.yaml")},
		} {
			t.Run(strings.Join(cmd, " ")+" "+filepath.Base(c.file), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(append(append([]string(nil), cmd...), "--config", c.file), strings.NewReader(""), &stdout, &stderr)
				assert.Equal(t, exitConfig, code, stderr.String())
				assert.Contains(t, stderr.String(), c.want)
				assert.NotContains(t, stderr.String(), "Usage:\n", "the error alone, no usage")
				assert.Empty(t, stdout.String())
			})
		}
	}
}

func TestConfigCommands_NoConfigExitsTwoWithUsage(t *testing.T) {
	for _, cmd := range configCommands {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(cmd, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, exitConfig, code, stderr.String())
			assert.Contains(t, stderr.String(), "lethe-proxy "+cmd[0]+": --config FILE is required")
			assert.Contains(t, stderr.String(), "Usage:\n")
		})
	}
}
