package pcwing

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// With pinecone.control_plane, the wing serves the control plane beside
// the data plane: describe index of the configured index answers the
// relay's bound address (port 0 resolved), and Shutdown stops both.
func TestServe_ControlPlaneAdvertisesTheRelay(t *testing.T) {
	url := startEmulator(t, emulator.Config{IndexName: "docs"})
	cfg := parse(t, `pinecone:
  listen: "127.0.0.1:0"
  control_plane: {listen: "127.0.0.1:0", upstream: "`+url+`"}
  indexes: [{name: docs, host: "`+url+`"}]
`)
	w := newWing(t, cfg, nil)
	relay, served := started(t, w)
	if w.ControlPlaneAddr() == nil {
		t.Fatal("no control-plane listener")
	}
	resp, err := http.Get("http://" + w.ControlPlaneAddr().String() + "/indexes/docs")
	if err != nil {
		t.Fatal(err)
	}
	var described struct{ Host string }
	err = json.NewDecoder(resp.Body).Decode(&described)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("describe through the control plane: %s, %v", resp.Status, err)
	}
	if described.Host != relay {
		t.Fatalf("describe answered host %q; want the relay %q", described.Host, relay)
	}
	if strings.HasSuffix(relay, ":0") {
		t.Fatalf("relay address %q has port 0", relay)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve returned %v after Shutdown; want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not return after Shutdown")
	}
}

// A control-plane listen address in use fails Listen, and nothing stays
// bound: the data plane's port is free again.
func TestListen_ControlPlaneBindFailureUnbindsTheDataPlane(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	busy := newWing(t, parse(t, strings.Replace(relayYAML, "%s", url, 1)), nil)
	if err := busy.Listen(); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, `pinecone:
  listen: "127.0.0.1:0"
  control_plane: {listen: "`+busy.Addr().String()+`", upstream: "`+url+`"}
  indexes: [{name: docs, host: "`+url+`"}]
`)
	w := newWing(t, cfg, nil)
	err := w.Listen()
	if err == nil || !strings.Contains(err.Error(), "pinecone.control_plane.listen") {
		t.Fatalf("Listen: %v; want the control plane's bind failure", err)
	}
	if w.Addr() != nil || w.ControlPlaneAddr() != nil {
		t.Fatal("a failed Listen left a listener bound")
	}
}
