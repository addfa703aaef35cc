package pcwing

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config without a Pinecone index has no wing: New returns nil, so that
// no command starts, opens or lists anything of Pinecone.
func TestNew_NoIndexNoWing(t *testing.T) {
	if w := New(parse(t, "postgres: {upstream: 127.0.0.1:5432}\n"), nil, nil); w != nil {
		t.Fatalf("got a wing %v; want nil", w)
	}
}

// A listen address already taken fails Listen with the key to change, and
// leaves nothing of the wing bound or open.
func TestListen_TakenAddressNamesTheKeyAndBindsNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	w := newWing(t, parse(t, `pinecone:
  listen: "`+taken.Addr().String()+`"
  indexes: [{name: docs, host: "http://127.0.0.1:1"}]
`), nil)
	err = w.Listen()
	if err == nil || !strings.Contains(err.Error(), "change pinecone.listen") {
		t.Fatalf("got %v; want an error naming pinecone.listen", err)
	}
	if w.Addr() != nil || w.relay != nil {
		t.Fatal("a failed Listen kept a listener or a relay")
	}
}

// A certificate that does not load fails Listen before the address is
// bound: the address stays free.
func TestListen_BadTLSFilesBindNothing(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	dir := t.TempDir()
	for _, f := range []string{"cert.pem", "key.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not PEM\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := newWing(t, parse(t, `pinecone:
  listen: "`+addr+`"
  tls: {cert_file: `+dir+`/cert.pem, key_file: `+dir+`/key.pem}
  indexes: [{name: docs, host: "http://127.0.0.1:1"}]
`), nil)
	err = w.Listen()
	if err == nil || !strings.Contains(err.Error(), "pinecone.tls: loading") {
		t.Fatalf("got %v; want an error naming pinecone.tls", err)
	}
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still bound after a failed start: %v", err)
	}
	again.Close()
}
