package pcwing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// Coverage lists every configured index's namespaces, counts them, and
// finds the ones without a rule.
func TestCoverage_CountsNamespacesAndFindsTheUncovered(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	cfg := parse(t, `pinecone:
  listen: "127.0.0.1:0"
  indexes: [{name: docs, host: "`+url+`", namespaces: [{namespace: notes, subjects: [user_id]}]}]
`)
	w := New(cfg, nil, nil)
	defer w.Close()
	relay, _ := started(t, w)
	upsert(t, relay, "notes", "alice")
	upsert(t, relay, "chats", "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	report, err := w.Coverage(ctx, cfg.Compiled().Coverage)
	if err != nil {
		t.Fatal(err)
	}
	if report.NamespacesChecked != 2 {
		t.Fatalf("%d namespaces checked; want 2", report.NamespacesChecked)
	}
	var uncovered []string
	for _, f := range report.Findings {
		uncovered = append(uncovered, f.Index+"/"+f.Namespace)
	}
	if strings.Join(uncovered, ",") != "docs/chats" {
		t.Fatalf("findings %v; want one for docs/chats", report.Findings)
	}
}

func TestCoverage_HTTPSHostWithoutAKeyNamesTheVariable(t *testing.T) {
	cfg := parse(t, `pinecone:
  indexes: [{name: docs, host: "https://docs-abc.svc.pinecone.io"}]
`)
	w := newWing(t, cfg, nil)
	_, err := w.Coverage(context.Background(), cfg.Compiled().Coverage)
	if err == nil || !strings.Contains(err.Error(), "set the environment variable LETHE_PINECONE_API_KEY (the key never goes in the config file)") {
		t.Fatalf("got %v; want an error naming the variable", err)
	}
}
