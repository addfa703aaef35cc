package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestCheckCmd_AStoreThatCannotBeReadLeavesTheOthersReported: with
// capture.store unreachable, check still checks the Pinecone index and
// reports its uncovered namespace on stdout, names the store it could not
// read on stderr, and exits 2.
func TestCheckCmd_AStoreThatCannotBeReadLeavesTheOthersReported(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	body := `{"namespace":"uncovered","vectors":[{"id":"v1","values":[0.1,0.2],"metadata":{"user_id":"someone"}}]}`
	resp, err := http.Post(url+"/vectors/upsert", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("emulator upsert: %s", resp.Status)
	}
	t.Setenv("CHECK_TEST_PINECONE_KEY", "key")
	dir := t.TempDir()
	path := filepath.Join(dir, "lethe.yaml")
	yaml := "postgres: {upstream: 127.0.0.1:5432}\n" +
		// Port 1 refuses at once: nothing listens there.
		"capture:\n  wal: off\n  store: \"host=127.0.0.1 port=1 dbname=x user=x connect_timeout=5\"\n" +
		"  tables:\n    - {table: public.docs, id: id, subjects: [user_id]}\n" +
		"pinecone:\n  indexes:\n    - {name: docs, host: \"" + url + "\", api_key_env: CHECK_TEST_PINECONE_KEY, namespaces: [{namespace: notes, subjects: [user_id]}]}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"check", "--config", path, "--format", "json"}, nil, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stdout: %s; stderr: %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `uncovered`) {
		t.Fatalf("the Pinecone index was not reported: stdout: %s", stdout.String())
	}
	if !strings.Contains(stdout.String(), `"ok": false`) || !strings.Contains(stdout.String(), `"unchecked": [`) {
		t.Fatalf("the summary must not be ok while a store was not checked: stdout: %s", stdout.String())
	}
	for _, want := range []string{"postgres: connecting with capture.store:", "not checked: postgres"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("stderr does not say %q: %s", want, stderr.String())
		}
	}
}
