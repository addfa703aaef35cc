package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key file makes references any holder of the same file opens, of
// either kind; a file too short is refused with the command that makes one.
func TestLoadReferences_SameFileOpensBothKindsAndAShortFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "mcp-ref.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("k", MinKeyFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	sealer, err := LoadReferences(keyFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	opener, err := LoadReferences(keyFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	for kind, value := range map[string]string{KindSecret: "the secret", KindSubject: "someone@example.com"} {
		if got, err := opener.OpenAny(sealer.Seal(kind, value)); err != nil || got != value {
			t.Fatalf("OpenAny of a %s reference: %q, %v", kind, got, err)
		}
	}
	if _, err := opener.OpenAny("lsubj_nothing"); !errors.Is(err, ErrReference) {
		t.Fatalf("OpenAny of a broken reference: %v, want ErrReference", err)
	}

	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadReferences(short, 0); err == nil || !strings.Contains(err.Error(), "head -c 32 /dev/urandom") {
		t.Fatalf("a short key file: %v, want it refused with the command that makes one", err)
	}
}
