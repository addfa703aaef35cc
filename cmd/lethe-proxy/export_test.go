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

// exportRun runs lethe-proxy export with args and returns its exit code,
// stdout and stderr.
func exportRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"export"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const exportConfig = `postgres: {upstream: "db.internal:5432"}
capture:
  store: "postgres://lethe:s3cret-pw@db.internal:5432/app"
  tables:
    - {table: public.docs, id: id, subjects: ["cmetadata->>'user_id'"], description: chat memory}
pinecone:
  indexes:
    - name: docs
      host: https://docs-abc.svc.pinecone.io
      api_key_env: DOCS_KEY
      namespaces: [{namespace: "*", subjects: [user_id]}]
`

func writeConfig(t *testing.T, dir, src string) string {
	t.Helper()
	path := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

func TestExport_CheckPassesOnTheFileItWroteAndFailsAfterARuleChangeUntilRegenerated(t *testing.T) {
	for _, name := range []string{"data-map.md", "data-map.json"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, file := writeConfig(t, dir, exportConfig), filepath.Join(dir, name)
			format := "markdown"
			if strings.HasSuffix(name, ".json") {
				format = "json"
			}
			code, _, stderr := exportRun("--config", cfg, "--format", format, "--out", file)
			require.Equal(t, 0, code, stderr)
			code, stdout, stderr := exportRun("--config", cfg, "--check", file)
			require.Equal(t, 0, code, stdout+stderr)

			// A new subject in the rule: the committed map is out of date.
			writeConfig(t, dir, strings.Replace(exportConfig, `subjects: ["cmetadata->>'user_id'"]`, `subjects: ["cmetadata->>'user_id'", owner_id]`, 1))
			code, stdout, stderr = exportRun("--config", cfg, "--check", file)
			assert.Equal(t, 1, code)
			assert.Contains(t, stdout, "--- "+file+" (committed)")
			assert.Regexp(t, `(?m)^\+.*owner_id`, stdout, "the diff shows the new subject as an added line")
			assert.Contains(t, stderr, "is out of date with "+cfg)
			regenerate := "lethe-proxy export --config " + cfg
			if format == "json" {
				regenerate += " --format json"
			}
			assert.Contains(t, stderr, regenerate+" --out "+file)

			code, _, stderr = exportRun("--config", cfg, "--format", format, "--out", file)
			require.Equal(t, 0, code, stderr)
			code, stdout, stderr = exportRun("--config", cfg, "--check", file)
			assert.Equal(t, 0, code, stdout+stderr)
		})
	}
}

func TestExport_ShowsNoSecretOfTheConfiguration(t *testing.T) {
	cfg := writeConfig(t, t.TempDir(), exportConfig)
	for _, format := range []string{"markdown", "json"} {
		code, stdout, stderr := exportRun("--config", cfg, "--format", format)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "public.docs")
		for _, secret := range []string{"s3cret-pw", "db.internal", "postgres://", "pinecone.io", "DOCS_KEY"} {
			assert.NotContains(t, stdout, secret, format)
		}
	}
}

func TestExport_NeedsNoFileTheConfigurationNames(t *testing.T) {
	src := exportConfig + "forget:\n  signing_key: lethe-signing.pem\n  admin: {tokens_file: admin-tokens.json}\n"
	cfg := writeConfig(t, t.TempDir(), src)
	code, stdout, stderr := exportRun("--config", cfg)
	require.Equal(t, 0, code, "the key and tokens files exist only where the proxy runs: %s", stderr)
	assert.Contains(t, stdout, "| Erasure requests (`forget.signing_key`) | `on` |")
	assert.NotContains(t, stdout, "lethe-signing.pem")
}

func TestExport_ExitCodes(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, exportConfig)
	invalid := filepath.Join(dir, "invalid.yaml")
	require.NoError(t, os.WriteFile(invalid, []byte("capture:\n  tables: [{table: public.docs}]\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"markdown on stdout", []string{"--config", cfg}, 0, ""},
		{"no config", nil, 2, "--config FILE is required"},
		{"invalid config", []string{"--config", invalid}, 2, "invalid config"},
		{"missing config", []string{"--config", filepath.Join(dir, "none.yaml")}, 2, "none.yaml"},
		{"unknown format", []string{"--config", cfg, "--format", "yaml"}, 2, `--format "yaml" is not markdown or json`},
		{"unreadable check file", []string{"--config", cfg, "--check", filepath.Join(dir, "absent.md")}, 2, "absent.md"},
		{"check file of no known format", []string{"--config", cfg, "--check", filepath.Join(dir, "map.txt")}, 2, "name the file .md or .json"},
		{"check with out", []string{"--config", cfg, "--check", "a.md", "--out", "b.md"}, 2, "leave out --out and --format"},
		{"unwritable out", []string{"--config", cfg, "--out", filepath.Join(dir, "no-such-dir", "map.md")}, 2, "writing the data map"},
		{"stray argument", []string{"--config", cfg, "map.md"}, 2, `unexpected argument "map.md"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := exportRun(tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.says)
		})
	}
}

// The repository's own example never goes stale: a change to the code or
// to docs/data-map.example.yaml that changes the map fails here until
// docs/data-map.md is regenerated.
func TestExport_TheDocsExampleIsCurrent(t *testing.T) {
	code, stdout, stderr := exportRun("--config", "../../docs/data-map.example.yaml", "--check", "../../docs/data-map.md")
	assert.Equal(t, 0, code, "regenerate it: go run ./cmd/lethe-proxy export --config docs/data-map.example.yaml --out docs/data-map.md\n%s%s", stdout, stderr)
}
