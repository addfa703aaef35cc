//go:build integration

package integration

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/certificate"
)

// forgetBinary is lethe-proxy serve with capture and forget configured,
// and the CLI that drives it the way an operator would.
type forgetBinary struct {
	bin, cfg, dir    string
	proxyAddr, admin string
	slot             string // the WAL follower's slot and publications
	env              []string
	cmd              *exec.Cmd
}

// newForgetBinary configures lethe-proxy with capture of tables (YAML
// list items) and forget; extra is appended to the config as it is (a
// pinecone section).
func newForgetBinary(t *testing.T, db testDB, tables string, extra ...string) *forgetBinary {
	f := &forgetBinary{bin: buildProxy(t), dir: t.TempDir(), proxyAddr: freePort(t), admin: freePort(t), slot: walSlot(t, db)}
	signer := testSigner(t)
	pem, err := signer.MarshalPrivateKey()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "signing.pem"), pem, 0o600))
	keys, err := certificate.NewKeySet("lethe.test/crash-log", signer.TrustedKey(time.Unix(0, 0)))
	require.NoError(t, err)
	keysJSON, err := keys.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "keys.json"), keysJSON, 0o644))
	secret, entry, err := admin.NewToken("ops", admin.RoleOperator)
	require.NoError(t, err)
	tokens, _ := json.Marshal(map[string]any{"tokens": []admin.Token{entry}})
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tokens.json"), tokens, 0o600))
	f.cfg = filepath.Join(f.dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(f.cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: %s
capture:
  ledger: {sqlite: ledger.db}
  store: "host=%s port=%s user=%s dbname=%s sslmode=disable"
  wal_slot: %s
  tables:
%s
forget:
  signing_key: signing.pem
  log_origin: lethe.test/crash-log
  admin: {listen: %s, tokens_file: tokens.json}
log: {level: debug}
%s`, f.proxyAddr, db.Addr(), db.Host, db.Port, db.User, db.DB, f.slot, tables, f.admin, strings.Join(extra, "\n"))), 0o600))
	f.env = append(os.Environ(), "LETHE_SUBJECT_SALT="+hex.EncodeToString(testSalt), "PGPASSWORD="+db.Password,
		"LETHE_ADMIN_URL=http://"+f.admin, "LETHE_ADMIN_TOKEN="+secret)
	return f
}

func (f *forgetBinary) start(t *testing.T) {
	f.cmd = exec.Command(f.bin, "serve", "--config", f.cfg)
	f.cmd.Env = f.env
	collectLogFile(t, f.cfg+".log")
	logf, err := os.OpenFile(f.cfg+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer logf.Close()
	f.cmd.Stdout, f.cmd.Stderr = logf, logf
	require.NoError(t, f.cmd.Start())
	cmd := f.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 400 {
		if resp, err := http.Get("http://" + f.admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	logs, _ := os.ReadFile(f.cfg + ".log")
	t.Fatalf("proxy did not become ready: %s", logs)
}

// cli runs a lethe-proxy subcommand with stdin and returns its stdout.
func (f *forgetBinary) cli(t *testing.T, stdin string, args ...string) (string, error) {
	cmd := exec.Command(f.bin, args...)
	cmd.Env = f.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, errOut.String())
	}
	return out.String(), nil
}

func (f *forgetBinary) status(t *testing.T, id string) map[string]any {
	out, err := f.cli(t, "", "forget", "status", id)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	return st
}

// TestForget_KillNineMidForgetResumesWithOneCertificate kills the proxy
// with SIGKILL while a forget has deleted one table and is blocked on the
// second, restarts it, and checks the forget completes on its own with
// exactly one certificate, which verifies.
func TestForget_KillNineMidForgetResumesWithOneCertificate(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "fc_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	pgxTable(t, db, "fc_notes", "id bigserial PRIMARY KEY, meta jsonb")
	f := newForgetBinary(t, db, `    - {table: public.fc_docs, id: id, subjects: [user_id], vacuum: true}
    - {table: public.fc_notes, id: id, subjects: ["meta->>'who'"]}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for i := range 20 {
		for _, who := range []string{"alice", "bob"} {
			_, err := app.Exec(ctx, `INSERT INTO fc_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, fmt.Sprintf("%s-%d", who, i), who)
			require.NoError(t, err)
			_, err = app.Exec(ctx, `INSERT INTO fc_notes (meta) VALUES ($1)`, fmt.Sprintf(`{"who": %q}`, who))
			require.NoError(t, err)
		}
	}

	out, err := f.cli(t, "alice\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Token string `json:"confirm_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)

	// Hold the second table: reads pass, the forget's DELETE waits.
	direct := connect(t, db.URL(db.Addr(), ""))
	lockTx, err := direct.Begin(ctx)
	require.NoError(t, err)
	_, err = lockTx.Exec(ctx, `LOCK TABLE fc_notes IN SHARE MODE`)
	require.NoError(t, err)

	out, err = f.cli(t, "alice\n", "forget", "confirm", "--token", pv.Token)
	require.NoError(t, err)
	var receipt struct {
		RequestID string `json:"request_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &receipt), out)
	require.NotEmpty(t, receipt.RequestID)
	require.Eventually(t, func() bool {
		layers, _ := f.status(t, receipt.RequestID)["layers"].([]any)
		return len(layers) == 2 && layers[0].(map[string]any)["done"] == true
	}, 20*time.Second, 20*time.Millisecond, "the first table is forgotten")
	time.Sleep(100 * time.Millisecond) // the second DELETE is waiting on the lock
	require.NoError(t, f.cmd.Process.Signal(syscall.SIGKILL))
	f.cmd.Wait()
	require.NoError(t, lockTx.Rollback(ctx))

	var docs, notes int
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM fc_docs WHERE user_id = 'alice'`).Scan(&docs))
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM fc_notes WHERE meta->>'who' = 'alice'`).Scan(&notes))
	require.Equal(t, [2]int{0, 20}, [2]int{docs, notes}, "killed between the two tables")

	f.start(t) // resumes the open request by itself
	require.Eventually(t, func() bool {
		return f.status(t, receipt.RequestID)["status"] == "completed"
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM fc_notes WHERE meta->>'who' = 'alice'`).Scan(&notes))
	require.Zero(t, notes)
	var bob int
	require.NoError(t, direct.QueryRow(ctx, `SELECT (SELECT count(*) FROM fc_docs WHERE user_id = 'bob') + (SELECT count(*) FROM fc_notes WHERE meta->>'who' = 'bob')`).Scan(&bob))
	require.Equal(t, 40, bob)

	certFile := filepath.Join(f.dir, "cert.json")
	_, err = f.cli(t, "", "forget", "certificate", receipt.RequestID, "--out", certFile)
	require.NoError(t, err)
	out, err = f.cli(t, "", "verify", "--keys", filepath.Join(f.dir, "keys.json"), certFile)
	require.NoError(t, err, out)
	require.Contains(t, out, "verdict: valid\n")
	cert, err := os.ReadFile(certFile)
	require.NoError(t, err)
	res := certificate.Verify(cert, mustKeys(t, filepath.Join(f.dir, "keys.json")), time.Now())
	require.EqualValues(t, 40, res.Payload.DeletedIDs.Count)

	// Kept gone across the restart.
	app = connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err = app.Exec(ctx, `INSERT INTO fc_docs (id, user_id, embedding) VALUES ('alice-new', 'alice', '[1,2,3]')`)
	require.Equal(t, capture.CodeForgotten, pgCode(err), "err: %v", err)

	// Exactly one completion in the log for this request.
	f.cmd.Process.Signal(syscall.SIGTERM)
	f.cmd.Wait()
	ledgerDB, err := sql.Open("sqlite3", "file:"+filepath.Join(f.dir, "ledger.db")+"?mode=ro")
	require.NoError(t, err)
	defer ledgerDB.Close()
	var completed int
	require.NoError(t, ledgerDB.QueryRowContext(context.Background(),
		`SELECT count(*) FROM tlog_records WHERE CAST(data AS TEXT) LIKE '%"forget.completed"%' AND CAST(data AS TEXT) LIKE ?`,
		`%`+receipt.RequestID+`%`).Scan(&completed))
	require.Equal(t, 1, completed)
	require.NotContains(t, mustRead(t, f.cfg+".log"), "alice", "the subject never reaches the logs")
}

func mustKeys(t *testing.T, path string) certificate.KeySet {
	keys, err := certificate.ParseKeySet([]byte(mustRead(t, path)))
	require.NoError(t, err)
	return keys
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
