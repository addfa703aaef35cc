package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestPineconeLayers_HTTPSHostWithoutAKeyCannotStart(t *testing.T) {
	p := config.Pinecone{Indexes: []config.PineconeIndex{{Name: "docs", Host: "https://docs-abc.svc.pinecone.io",
		Namespaces: []config.NamespaceRule{{Namespace: "*", Subjects: []string{"user_id"}}}}}}
	_, _, err := pineconeLayers(p, func(string) string { return "" }, quiet)
	if err == nil || !strings.Contains(err.Error(), "set the environment variable LETHE_PINECONE_API_KEY") {
		t.Fatalf("got %v; want a start-up error naming the variable", err)
	}
}

// Each index's rules become layers named as capture names the ledger's
// records; the key comes from the index's own variable.
func TestPineconeLayers_OneLayerPerRuleKeyFromItsVariable(t *testing.T) {
	url := startEmulator(t, emulator.Config{APIKey: "local-key"})
	p := config.Pinecone{VerifyDeadline: config.Duration(time.Second), Indexes: []config.PineconeIndex{
		{Name: "docs", Host: "https://docs-abc.svc.pinecone.io", Namespaces: []config.NamespaceRule{
			{Namespace: "", Subjects: []string{"user_id"}}, {Namespace: "*", Subjects: []string{"owner"}}}},
		{Name: "relayed-only", Host: "http://127.0.0.1:1"},
		{Name: "local", Host: url, APIKeyEnv: "LOCAL_KEY", Namespaces: []config.NamespaceRule{{Namespace: "tenant-a", Subjects: []string{"user_id"}}}},
	}}
	env := map[string]string{"LETHE_PINECONE_API_KEY": "cloud-key", "LOCAL_KEY": "local-key"}
	layers, indexes, err := pineconeLayers(p, func(k string) string { return env[k] }, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ix := range indexes {
			ix.Close()
		}
	}()
	var names []string
	for _, l := range layers {
		names = append(names, string(l.Store())+" "+l.Name())
	}
	if want := "pinecone docs/__default__,pinecone docs/*,pinecone local/tenant-a"; strings.Join(names, ",") != want {
		t.Fatalf("layers %v; want %s", names, want)
	}
	if len(indexes) != 2 {
		t.Fatalf("%d indexes opened; want 2 (an index without rules has no layer)", len(indexes))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := layers[2].Matching(ctx, "alice", []string{"a1"}); err != nil {
		t.Fatalf("the emulator refused forget's key from LOCAL_KEY: %v", err)
	}
}

func TestRulesDigest_CoversPineconeRules(t *testing.T) {
	tables := []config.TableRule{{Table: "public.docs", ID: "id", Subjects: []string{"user_id"}}}
	b, _ := json.Marshal(tables)
	sum := sha256.Sum256(b)
	if got := rulesDigest(tables, nil); got != hex.EncodeToString(sum[:]) {
		t.Fatal("without Pinecone the digest is the tables' alone, as before")
	}
	index := func(host, field string) []config.PineconeIndex {
		return []config.PineconeIndex{{Name: "docs", Host: host, Namespaces: []config.NamespaceRule{{Namespace: "*", Subjects: []string{field}}}}}
	}
	withPinecone := rulesDigest(tables, index("https://a.pinecone.io", "user_id"))
	if withPinecone == rulesDigest(tables, nil) {
		t.Fatal("Pinecone rules do not change the digest")
	}
	if rulesDigest(tables, index("https://a.pinecone.io", "owner")) == withPinecone {
		t.Fatal("another subject field gives the same digest")
	}
	if rulesDigest(tables, index("https://b.pinecone.io", "user_id")) != withPinecone {
		t.Fatal("the host is where the rules apply, not a rule: it must not change the digest")
	}
}

func TestRulesDigest_IgnoresDescriptions(t *testing.T) {
	tables := []config.TableRule{{Table: "public.docs", ID: "id", Subjects: []string{"user_id"}}}
	indexes := []config.PineconeIndex{{Name: "docs", Host: "https://a.pinecone.io", Namespaces: []config.NamespaceRule{{Namespace: "*", Subjects: []string{"user_id"}}}}}
	before := rulesDigest(tables, indexes)
	tables[0].Description = "chat memory embeddings"
	indexes[0].Namespaces[0].Description = "support answers"
	if rulesDigest(tables, indexes) != before {
		t.Fatal("a description changed the rules digest: it is documentation for the data map, not a rule")
	}
}

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
