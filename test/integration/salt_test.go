//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// TestSalt_AnotherSaltIsRefusedAndTheOriginalKeepsTheForgottenGone
// forgets alice, then restarts the proxy with another subject salt (as
// pasting a walkthrough's salt creation a second time does): the start is
// refused, naming the ledger, the salt's source and the way back, and so
// is `ledger subject`. Restarted with the original salt, a write about
// alice is still refused LT003.
func TestSalt_AnotherSaltIsRefusedAndTheOriginalKeepsTheForgottenGone(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "salt_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.salt_docs, id: id, subjects: [user_id]}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for _, who := range []string{"alice", "bob"} {
		_, err := app.Exec(ctx, `INSERT INTO salt_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, who+"-1", who)
		require.NoError(t, err)
	}
	out, err := f.cli(t, "alice\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Token string `json:"confirm_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
	out, err = f.cli(t, "alice\n", "forget", "confirm", "--token", pv.Token)
	require.NoError(t, err)
	var receipt struct {
		RequestID string `json:"request_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &receipt), out)
	require.Eventually(t, func() bool {
		return f.status(t, receipt.RequestID)["status"] == "completed"
	}, 30*time.Second, 50*time.Millisecond)
	app.Close(ctx)
	require.NoError(t, f.cmd.Process.Signal(syscall.SIGTERM))
	f.cmd.Wait()

	original := f.env
	otherSalt := hex.EncodeToString(bytes.Repeat([]byte("another-salt-32!"), 2))
	f.env = append(append([]string(nil), original...), "LETHE_SUBJECT_SALT="+otherSalt)

	// A start that is not refused would serve until the deadline kills it.
	runCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serve := exec.CommandContext(runCtx, f.bin, "serve", "--config", f.cfg)
	serve.Env = f.env
	run := runCommand(t, serve)
	require.NoError(t, runCtx.Err(), "the proxy started with another salt; logs: %s", run.stderr)
	require.NotZero(t, run.code)
	for _, want := range []string{
		filepath.Join(f.dir, "ledger.db"), "was written with another subject salt than the one in LETHE_SUBJECT_SALT",
		"Point LETHE_SUBJECT_SALT_FILE (or LETHE_SUBJECT_SALT) at the salt this ledger was written with",
		"point capture.ledger at a new ledger",
	} {
		require.Contains(t, run.stderr, want)
	}
	require.NotContains(t, run.stderr, otherSalt[:16], "the salt never reaches the logs")
	require.NotContains(t, run.stderr, hex.EncodeToString(testSalt)[:16], "the salt never reaches the logs")

	_, err = f.cli(t, "bob\n", "ledger", "subject", "--config", f.cfg)
	require.ErrorContains(t, err, "was written with another subject salt")

	f.env = original
	out, err = f.cli(t, "bob\n", "ledger", "subject", "--config", f.cfg)
	require.NoError(t, err)
	require.Contains(t, out, "public.salt_docs  bob-1")
	f.start(t)
	app = connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err = app.Exec(ctx, `INSERT INTO salt_docs (id, user_id, embedding) VALUES ('alice-2', 'alice', '[1,2,3]')`)
	require.Equal(t, capture.CodeForgotten, pgCode(err), "err: %v", err)
}
