package main

import (
	"testing"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

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
