package datamap

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func build(t *testing.T, file string) Map {
	t.Helper()
	cfg, err := config.LoadOffline(file)
	require.NoError(t, err)
	m, err := Build(cfg)
	require.NoError(t, err)
	return m
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./config/datamap -update to create it")
	if d := Diff(path, "rendered", want, got); d != "" {
		t.Fatalf("the rendering differs from %s (go test ./config/datamap -update rewrites it):\n%s", path, d)
	}
}

func TestMarkdown_Golden(t *testing.T) {
	golden(t, "full.md", Markdown(build(t, "testdata/full.yaml")))
}

func TestJSON_Golden(t *testing.T) {
	golden(t, "full.json", JSON(build(t, "testdata/full.yaml")))
}

func TestBuild_SameConfigSameBytes(t *testing.T) {
	a, b := build(t, "testdata/full.yaml"), build(t, "testdata/full.yaml")
	assert.Equal(t, Markdown(a), Markdown(b))
	assert.Equal(t, JSON(a), JSON(b))
}

func TestBuild_NoSecretReachesTheMap(t *testing.T) {
	m := build(t, "testdata/full.yaml")
	for _, out := range [][]byte{Markdown(m), JSON(m)} {
		for _, secret := range []string{
			"s3cret", "db.internal", "ledger-db", "postgres://", // the store and ledger DSNs
			"pinecone.io", "https://", // index hosts
			"DOCS_PINECONE_KEY", "LETHE_PINECONE_API_KEY", // the API key variables
			"lethe-signing.pem", "admin-tokens.json", "example.com/lethe-log", // key and token files, the log origin
		} {
			assert.NotContains(t, string(out), secret)
		}
	}
}

func TestMarkdown_SaysWhenARuleHasNoDescription(t *testing.T) {
	md := string(Markdown(build(t, "testdata/full.yaml")))
	assert.Contains(t, md, "### `public.mem0`\n\n"+noDescription+"\n")
	assert.Contains(t, md, `support conversations \| summaries`, "a pipe in a table cell is escaped")
}

func TestBuild_FollowsTheConfiguration(t *testing.T) {
	m := build(t, "testdata/full.yaml")
	require.Len(t, m.Tables, 3)
	lc := m.Tables[0]
	assert.Equal(t, "app", lc.Database)
	assert.Equal(t, Retention{Retain: "90d", RetainBy: "cmetadata->>'created_at'",
		Summary: "deleted by lethe-proxy sweep once older than 90d, counted from column or expression cmetadata->>'created_at'; or earlier by a forget"}, lc.Retention)
	assert.Equal(t, `VACUUM (INDEX_CLEANUP ON) "public"."langchain_pg_embedding"`, lc.Forget.Cleanup)
	assert.Empty(t, m.Tables[1].Forget.Cleanup)
	assert.Equal(t, "kept until a forget", m.Tables[1].Retention.Summary)
	assert.Equal(t, "36h", m.Tables[2].Retention.Retain)

	require.Len(t, m.Namespaces, 2)
	assert.Equal(t, "__default__", m.Namespaces[0].Namespace)
	assert.Equal(t, "*", m.Namespaces[1].Namespace)
	assert.Contains(t, m.Namespaces[1].Forget.Scope, "except those with a rule of their own")
	assert.Contains(t, m.Namespaces[0].Forget.VerifyMethod, "for at most 45s")
	assert.Equal(t, []string{"manuals"}, m.UnruledIndexes)
	assert.Equal(t, []Ignored{
		{Store: "postgres", Table: "public.help_articles", Reason: "public product documentation, no personal data"},
		{Store: "pinecone", Index: "manuals", Namespace: "__default__", Reason: "product manuals shared by every tenant"},
	}, m.Ignored)

	policy := map[string]string{}
	for _, p := range m.Policies {
		policy[p.Key] = p.Setting
	}
	assert.Equal(t, map[string]string{"capture.mode": "strict", "capture.fail_open": "off", "capture.wal": "on",
		"forget.signing_key": "on", "forget.forgotten": "refuse", "forget.late_writes": "delete", "coverage.mode": "enforce"}, policy)
}

func TestBuild_WithoutForgetOrWALThePoliciesSaySo(t *testing.T) {
	dir := t.TempDir()
	src := "postgres: {upstream: db:5432}\ncapture:\n  wal: off\n  database: app\n  tables: [{table: public.docs, id: id, subjects: [user_id]}]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(src), 0o600))
	m := build(t, filepath.Join(dir, "c.yaml"))
	for _, p := range m.Policies {
		switch p.Key {
		case "capture.wal":
			assert.Equal(t, "off", p.Setting)
			assert.Contains(t, p.Meaning, "only writes through the proxy are recorded")
		case "forget.signing_key":
			assert.Equal(t, "off", p.Setting)
			assert.Contains(t, p.Meaning, "no erasure request can run")
		case "forget.late_writes":
			assert.True(t, strings.HasSuffix(p.Meaning, "(only once the WAL follower, which sees them, is on)"), p.Meaning)
		}
	}
}
