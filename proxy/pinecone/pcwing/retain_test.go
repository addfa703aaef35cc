package pcwing

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Each namespace rule with retain becomes one retainer named as the ledger
// names the rule, carrying its retain and retain_by; an index without
// retain is not opened, so it needs no key.
func TestRetainers_OnePerRuleWithRetain(t *testing.T) {
	w := newWing(t, parse(t, `pinecone:
  indexes:
    - name: docs
      host: "http://127.0.0.1:1"
      namespaces:
        - {namespace: notes, subjects: [user_id], retain: 7d, retain_by: created_at}
        - {namespace: "", subjects: [user_id]}
        - {namespace: "*", subjects: [owner], retain: 30d, retain_by: ts}
    - {name: cloud, host: "https://cloud-abc.svc.pinecone.io", namespaces: [{namespace: "*", subjects: [user_id]}]}
`), nil)
	retainers, closeRetainers, err := w.Retainers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer closeRetainers()
	var got []string
	for _, r := range retainers {
		got = append(got, r.Name()+" "+r.Retain.String()+" "+r.RetainBy)
	}
	want := "docs/notes 168h0m0s created_at,docs/* 720h0m0s ts"
	if strings.Join(got, ",") != want {
		t.Fatalf("retainers %v; want %s", got, want)
	}
}

func TestRetainers_HTTPSHostWithoutAKeyNamesTheVariable(t *testing.T) {
	w := newWing(t, parse(t, `pinecone:
  indexes:
    - {name: docs, host: "https://docs-abc.svc.pinecone.io", api_key_env: DOCS_KEY, namespaces: [{namespace: notes, subjects: [user_id], retain: 1d, retain_by: ts}]}
`), nil)
	_, _, err := w.Retainers(context.Background())
	if err == nil || !strings.Contains(err.Error(), "set the environment variable DOCS_KEY") {
		t.Fatalf("got %v; want an error naming DOCS_KEY", err)
	}
}

// A sweep with nothing to retain opens nothing, and its closer is safe to
// call.
func TestRetainers_NoRetainNoRetainer(t *testing.T) {
	w := newWing(t, parse(t, `pinecone:
  indexes: [{name: docs, host: "http://127.0.0.1:1", namespaces: [{namespace: "*", subjects: [user_id]}]}]
`), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	retainers, closeRetainers, err := w.Retainers(ctx)
	if err != nil || len(retainers) != 0 {
		t.Fatalf("got %d retainers, %v; want none", len(retainers), err)
	}
	closeRetainers()
}
