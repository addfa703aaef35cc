package pcwing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

func TestForget_HTTPSHostWithoutAKeyCannotStart(t *testing.T) {
	w := newWing(t, parse(t, `pinecone:
  indexes:
    - {name: docs, host: "https://docs-abc.svc.pinecone.io", namespaces: [{namespace: "*", subjects: [user_id]}]}
`), nil)
	_, err := w.Forget(context.Background())
	if err == nil || !strings.Contains(err.Error(), "set the environment variable LETHE_PINECONE_API_KEY") {
		t.Fatalf("got %v; want a start-up error naming the variable", err)
	}
}

// Each index's rules become layers named as capture names the ledger's
// records; the key comes from the index's own variable.
func TestForget_OneLayerPerRuleKeyFromItsVariable(t *testing.T) {
	url := startEmulator(t, emulator.Config{APIKey: "local-key"})
	w := newWing(t, parse(t, `pinecone:
  verify_deadline: 1s
  indexes:
    - name: docs
      host: "https://docs-abc.svc.pinecone.io"
      namespaces: [{namespace: "", subjects: [user_id]}, {namespace: "*", subjects: [owner]}]
    - {name: relayed-only, host: "http://127.0.0.1:1"}
    - {name: local, host: "`+url+`", api_key_env: LOCAL_KEY, namespaces: [{namespace: tenant-a, subjects: [user_id]}]}
`), map[string]string{"LETHE_PINECONE_API_KEY": "cloud-key", "LOCAL_KEY": "local-key"})
	side, err := w.Forget(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	var names []string
	for _, l := range side.Layers {
		names = append(names, string(l.Store())+" "+l.Name())
	}
	if want := "pinecone docs/__default__,pinecone docs/*,pinecone local/tenant-a"; strings.Join(names, ",") != want {
		t.Fatalf("layers %v; want %s", names, want)
	}
	if len(w.opened) != 2 {
		t.Fatalf("%d indexes opened; want 2 (an index without rules has no layer)", len(w.opened))
	}
	if side.Settle != nil {
		t.Fatal("the relay records as it relays: nothing to settle")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := side.Layers[2].Matching(ctx, "alice", []string{"a1"}); err != nil {
		t.Fatalf("the emulator refused forget's key from LOCAL_KEY: %v", err)
	}
	side.Close()
	if len(w.opened) != 0 {
		t.Fatal("the side's Close left index connections for the wing to close")
	}
}

// The wing's Close closes forget's index connections too, for a proxy
// stopping without closing the side itself.
func TestClose_ClosesForgetsIndexes(t *testing.T) {
	w := newWing(t, parse(t, `pinecone:
  indexes: [{name: local, host: "http://127.0.0.1:1", namespaces: [{namespace: "*", subjects: [user_id]}]}]
`), nil)
	if _, err := w.Forget(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.opened) != 1 {
		t.Fatalf("%d indexes opened; want 1", len(w.opened))
	}
	w.Close()
	if len(w.opened) != 0 {
		t.Fatal("Close left forget's index connections open")
	}
}

// An index with api: documents gets layers that reach it through the
// documents endpoints (REST), not go-pinecone's gRPC.
func TestForget_DocumentIndexLayersUseTheDocumentsAPI(t *testing.T) {
	var (
		mu    sync.Mutex
		paths []string
	)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Pinecone-Api-Version"))
		mu.Unlock()
		w.Write([]byte(`{"documents":{},"namespace":"notes","usage":{"read_units":1}}`))
	}))
	defer host.Close()
	w := newWing(t, parse(t, `pinecone:
  indexes:
    - {name: notes, host: "`+host.URL+`", api: documents, namespaces: [{namespace: notes, subjects: [user_id]}]}
`), nil)
	side, err := w.Forget(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := side.Layers[0].Matching(ctx, "alice", []string{"a1"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "POST /namespaces/notes/documents/fetch 2026-07"
	if len(paths) == 0 || !slices.Contains(paths, want) {
		t.Fatalf("requests %v; want %q among them", paths, want)
	}
}
