package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// A sweep on a fresh ledger records its signing key in the transparency
// log (key.rotated) before its report's event, as the proxy does at start:
// no report in the log is signed by a key the log never announced.
func TestSweepCmd_AnnouncesTheKeyBeforeItsReport(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	signer, err := certificate.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := signer.MarshalPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	key := write("key.pem", string(pem))
	tokens := write("tokens.json", "[]\n")
	ledgerFile := filepath.Join(dir, "ledger.db")
	cfg := write("lethe.yaml", `log: {level: error}
capture: {ledger: {sqlite: `+ledgerFile+`}}
pinecone:
  indexes:
    - {name: docs, host: "`+url+`", namespaces: [{namespace: notes, subjects: [user_id], retain: 7d, retain_by: created_at}]}
forget:
  signing_key: `+key+`
  log_origin: test.local/sweep-log
  admin: {tokens_file: `+tokens+`}
`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"sweep", "--config", cfg, "--report", filepath.Join(dir, "report.json")}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	l, err := ledger.OpenSQLite(ledgerFile, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := l.TransparencyLog()
	size, err := log.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for n := range size {
		leaf, err := log.ReadRecord(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		e, err := certificate.ParseEvent(leaf)
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		events = append(events, e.Event)
	}
	if want := certificate.EventKeyRotated + "," + certificate.EventRetentionSwept; strings.Join(events, ",") != want {
		t.Fatalf("log holds %v; want %s", events, want)
	}
}
