package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	cliSubject   = "carol@example.com"
	cliRequestID = "0123456789abcdef0123456789abcdef"
	cliOrigin    = "lethe.example.com/log"
)

// cliFakeEngine answers the admin API with canned results, or err, and
// serves the transparency log from log (a real translog.Log in memory).
type cliFakeEngine struct {
	mu      sync.Mutex
	err     error
	log     *translog.Log
	calls   []string
	nothing bool // Preview finds nothing, with near misses
}

func (f *cliFakeEngine) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *cliFakeEngine) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *cliFakeEngine) setLog(l *translog.Log) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = l
}

func (f *cliFakeEngine) currentLog() *translog.Log {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log
}

func (f *cliFakeEngine) Preview(ctx context.Context, subject string) (engine.Preview, error) {
	if f.nothing {
		near := &engine.NearMisses{LedgerRecords: 2, Records: 2}
		return engine.Preview{
			Layers:       []engine.LayerPreview{{Store: "postgres", Table: "public.docs", NearMisses: near}},
			NothingFound: true, NearMisses: near, Warning: "No records of this subject were found in any layer; 2 ledger records and 2 store records name it in another spelling",
			Token: "confirm-tok", ExpiresAt: time.Date(2025, 3, 1, 12, 10, 0, 0, time.UTC),
		}, f.record("Preview " + subject)
	}
	return engine.Preview{
		Layers: []engine.LayerPreview{{Store: "postgres", Table: "public.docs", LedgerRecords: 2, Rows: 2}},
		Token:  "confirm-tok", ExpiresAt: time.Date(2025, 3, 1, 12, 10, 0, 0, time.UTC),
	}, f.record("Preview " + subject)
}

func (f *cliFakeEngine) Forget(ctx context.Context, subject, confirmToken string, options ...engine.ForgetOptions) (engine.Receipt, error) {
	call := "Forget " + subject + " " + confirmToken
	for _, o := range options {
		if o.NothingFound {
			call += " nothing_found"
		}
	}
	return engine.Receipt{RequestID: cliRequestID, Deadline: time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC), SubjectSecret: "abcd"},
		f.record(call)
}

func (f *cliFakeEngine) Status(ctx context.Context, id string) (engine.Status, error) {
	return engine.Status{RequestID: id, Status: "completed"}, f.record("Status " + id)
}

func (f *cliFakeEngine) List(ctx context.Context, filter engine.ListFilter) (engine.RequestList, error) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return engine.RequestList{Requests: []engine.RequestSummary{
			{RequestID: cliRequestID, Status: "received", ReceivedAt: t0, Deadline: t0.Add(30 * 24 * time.Hour), UpdatedAt: t0, Overdue: true},
			{RequestID: "req-done", Status: "completed", ReceivedAt: t0.Add(-time.Hour), Deadline: t0.Add(30*24*time.Hour - time.Hour), UpdatedAt: t0},
		}, More: filter.Limit == 2},
		f.record(fmt.Sprintf("List status=%s overdue=%t limit=%d", filter.Status, filter.Overdue, filter.Limit))
}

func (f *cliFakeEngine) Certificate(ctx context.Context, id string) ([]byte, error) {
	return []byte(`{"payload":"eyJhIjoxfQ==",  "sig":"x"}`), f.record("Certificate " + id)
}

func (f *cliFakeEngine) Reverify(ctx context.Context, id, subject string) (engine.Reverification, error) {
	return engine.Reverification{RequestID: id, Absent: true}, f.record("Reverify " + id + " " + subject)
}

func (f *cliFakeEngine) Lift(ctx context.Context, subject string) (bool, error) {
	return true, f.record("Lift " + subject)
}

func (f *cliFakeEngine) Checkpoint(ctx context.Context) ([]byte, error) {
	if err := f.record("Checkpoint"); err != nil {
		return nil, err
	}
	c, err := f.currentLog().Sign(ctx)
	return c.Note, err
}

func (f *cliFakeEngine) Inclusion(ctx context.Context, index, size int64) (engine.InclusionProof, error) {
	return engine.InclusionProof{}, f.record("Inclusion")
}

func (f *cliFakeEngine) Consistency(ctx context.Context, oldSize, newSize int64) (engine.ConsistencyProof, error) {
	if err := f.record("Consistency"); err != nil {
		return engine.ConsistencyProof{}, err
	}
	p, err := f.currentLog().ConsistencyProof(ctx, oldSize, newSize)
	out := engine.ConsistencyProof{OldSize: oldSize, NewSize: newSize}
	for _, h := range p {
		out.Hashes = append(out.Hashes, h[:])
	}
	return out, err
}

func (f *cliFakeEngine) Verify(cert []byte) engine.VerifyResult {
	f.record("Verify")
	return engine.VerifyResult{Verdict: "valid"}
}

// cliEnv is an admin API over a fake engine and a token file for it.
type cliEnv struct {
	engine    *cliFakeEngine
	url       string
	tokenFile string
	dir       string
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	secret, entry, err := admin.NewToken("cli-test", admin.RoleOperator)
	require.NoError(t, err)
	eng := &cliFakeEngine{}
	h, err := admin.New(admin.Config{Engine: eng, Tokens: []admin.Token{entry}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600))
	t.Setenv("LETHE_ADMIN_URL", "")
	t.Setenv("LETHE_ADMIN_TOKEN", "")
	return &cliEnv{engine: eng, url: srv.URL, tokenFile: tokenFile, dir: dir}
}

// run runs the command with the client flags appended.
func (e *cliEnv) run(stdin string, args ...string) (code int, stdout, stderr string) {
	args = append(args, "--admin", e.url, "--token-file", e.tokenFile)
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestForgetCmd_CallsTheAPI(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCall   string
		wantStdout string
	}{
		{"preview reads the subject from stdin", cliSubject + "\n", []string{"forget", "preview"}, "Preview " + cliSubject, `"confirm_token": "confirm-tok"`},
		{"one line ending is removed, nothing else", "  " + cliSubject + " \r\nignored second line\n", []string{"forget", "preview"}, "Preview   " + cliSubject + " ", `"rows": 2`},
		{"only the first line is read", cliSubject + "\n\n", []string{"forget", "preview"}, "Preview " + cliSubject, `"rows": 2`},
		{"confirm", cliSubject, []string{"forget", "confirm", "--token", "confirm-tok"}, "Forget " + cliSubject + " confirm-tok", `"request_id": "` + cliRequestID + `"`},
		{"confirm that nothing was found", cliSubject, []string{"forget", "confirm", "--token", "confirm-tok", "--nothing-found"}, "Forget " + cliSubject + " confirm-tok nothing_found", `"request_id": "` + cliRequestID + `"`},
		{"status", "", []string{"forget", "status", cliRequestID}, "Status " + cliRequestID, `"status": "completed"`},
		{"status with flags first", "", []string{"forget", "status", "--admin", "http://unused.invalid", cliRequestID}, "Status " + cliRequestID, `"status": "completed"`},
		{"certificate verbatim", "", []string{"forget", "certificate", cliRequestID}, "Certificate " + cliRequestID, `{"payload":"eyJhIjoxfQ==",  "sig":"x"}`},
		{"lift", cliSubject + "\n", []string{"forget", "lift"}, "Lift " + cliSubject, `"lifted": true`},
		{"reverify", cliSubject + "\n", []string{"forget", "reverify", "req-1"}, "Reverify req-1 " + cliSubject, `"absent": true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLIEnv(t)
			code, stdout, stderr := env.run(tt.stdin, tt.args...)
			require.Equal(t, 0, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, tt.wantStdout)
			assert.Equal(t, []string{tt.wantCall}, env.engine.recorded())
			assert.NotContains(t, stdout+stderr, cliSubject, "the subject is never echoed")
		})
	}
}

func TestForgetCmd_PreviewThatFoundNothingWarnsAndNamesTheFlag(t *testing.T) {
	env := newCLIEnv(t)
	env.engine.nothing = true
	code, stdout, stderr := env.run(cliSubject+"\n", "forget", "preview")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, `"nothing_found": true`)
	assert.Contains(t, stdout, `"near_misses": {`)
	assert.Contains(t, stderr, "WARNING: No records of this subject were found in any layer; 2 ledger records and 2 store records")
	assert.Contains(t, stderr, "forget confirm --token CONFIRM_TOKEN --nothing-found")
	assert.NotContains(t, stdout+stderr, cliSubject)
}

func TestForgetCmd_CertificateOutWritesTheBytes(t *testing.T) {
	env := newCLIEnv(t)
	out := filepath.Join(env.dir, "cert.json")
	code, stdout, stderr := env.run("", "forget", "certificate", cliRequestID, "--out", out)
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Empty(t, stdout)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, `{"payload":"eyJhIjoxfQ==",  "sig":"x"}`, string(b))
}

func TestForgetCmd_ReportsTheServersError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		args       []string
		wantStderr []string
	}{
		{"expired token", engine.ErrTokenExpired, []string{"forget", "confirm", "--token", "t"}, []string{"run preview again", "HTTP 409"}},
		{"used token names the request", &engine.UsedTokenError{RequestID: "req-7"}, []string{"forget", "confirm", "--token", "t"}, []string{"already used", "existing request: req-7"}},
		{"nothing found names the flag and the near misses", &engine.NothingFoundError{NearMisses: engine.NearMisses{LedgerRecords: 1, Records: 4}},
			[]string{"forget", "confirm", "--token", "t"}, []string{"no records of this subject were found", "1 ledger records and 4 store records", "--nothing-found", "HTTP 409"}},
		{"unknown request", fmt.Errorf("wrapped: %w", ledger.ErrNotFound), []string{"forget", "status", "nope"}, []string{"HTTP 404"}},
		{"server failure", fmt.Errorf("boom with %s", cliSubject), []string{"forget", "preview"}, []string{"internal error", "HTTP 500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLIEnv(t)
			env.engine.err = tt.err
			code, _, stderr := env.run(cliSubject+"\n", tt.args...)
			assert.Equal(t, 1, code)
			for _, want := range tt.wantStderr {
				assert.Contains(t, stderr, want)
			}
			assert.NotContains(t, stderr, cliSubject)
		})
	}
}

func TestForgetCmd_RefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStderr string
	}{
		{"subject as a flag", "", []string{"forget", "preview", "--subject", cliSubject}, "flag provided but not defined"},
		{"subject as an argument", "", []string{"forget", "preview", cliSubject}, "read from stdin"},
		{"empty stdin", "", []string{"forget", "preview"}, "give the subject on stdin"},
		{"blank stdin", "  \n", []string{"forget", "lift"}, "give the subject on stdin"},
		{"empty first line", "\n" + cliSubject + "\n", []string{"forget", "preview"}, "give the subject on stdin"},
		{"NUL in the subject", "ca\x00rol@example.com\n", []string{"forget", "preview"}, "the subject holds a NUL character (U+0000) at byte 2"},
		{"control character", cliSubject + "\x1b\n", []string{"forget", "confirm", "--token", "t"}, "control character (U+001B)"},
		{"two line endings' carriage returns", cliSubject + "\r\r\n", []string{"forget", "lift"}, "control character (U+000D)"},
		{"invalid UTF-8", "carol\xff\n", []string{"forget", "reverify", "req-1"}, "not valid UTF-8"},
		{"confirm without token", cliSubject, []string{"forget", "confirm"}, "--token CONFIRM_TOKEN is required"},
		{"status without id", "", []string{"forget", "status"}, "give the request id"},
		{"unknown subcommand", "", []string{"forget", "delete"}, `unknown subcommand "delete"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLIEnv(t)
			code, stdout, stderr := env.run(tt.stdin, tt.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tt.wantStderr)
			assert.Empty(t, env.engine.recorded())
			assert.NotContains(t, stdout+stderr, cliSubject, "the subject is never echoed")
		})
	}
}

func TestForgetCmd_TokenAndURLFromTheEnvironment(t *testing.T) {
	env := newCLIEnv(t)
	secret, err := os.ReadFile(env.tokenFile)
	require.NoError(t, err)

	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"forget", "status", cliRequestID}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "LETHE_ADMIN_TOKEN")

	t.Setenv("LETHE_ADMIN_URL", env.url)
	t.Setenv("LETHE_ADMIN_TOKEN", strings.TrimSpace(string(secret)))
	out.Reset()
	errOut.Reset()
	require.Equal(t, 0, run([]string{"forget", "status", cliRequestID}, strings.NewReader(""), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), cliRequestID)

	t.Setenv("LETHE_ADMIN_TOKEN", "wrong")
	errOut.Reset()
	assert.Equal(t, 1, run([]string{"forget", "status", cliRequestID}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "HTTP 401")
}

func TestAdminTokenCmd_PrintsTokenAndEntry(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"admin-token", "--name", "ops-1", "--role", "operator"}, nil, &out, &errOut), errOut.String())
	secret := strings.TrimSpace(out.String())
	assert.Len(t, secret, 43)

	line := ""
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(l, "{") {
			line = l
		}
	}
	require.NotEmpty(t, line, "stderr: %s", errOut.String())
	assert.NotContains(t, errOut.String(), secret, "only the hash goes to the tokens file")
	tokens, err := admin.ParseTokens([]byte(`{"tokens":[` + line + `]}`))
	require.NoError(t, err)
	assert.Equal(t, admin.Token{Name: "ops-1", Role: admin.RoleOperator, SHA256: admin.HashToken(secret)}, tokens[0])

	for _, args := range [][]string{
		{"admin-token", "--name", "x", "--role", "root"},
		{"admin-token", "--role", "auditor"},
	} {
		errOut.Reset()
		assert.Equal(t, 2, run(args, nil, &out, &errOut), "%v", args)
	}
}

// cliLog is a transparency log in memory holding records, signed by signer.
func cliLog(t *testing.T, signer *certificate.Signer, records ...string) *translog.Log {
	t.Helper()
	l, err := translog.New(&translog.MemoryStorage{}, signer.NoteSigner(cliOrigin), cliOrigin)
	require.NoError(t, err)
	for _, r := range records {
		_, err := l.Append(context.Background(), []byte(r))
		require.NoError(t, err)
	}
	return l
}

// cliKeysFile writes the trusted keys file for signers.
func cliKeysFile(t *testing.T, dir string, signers ...*certificate.Signer) string {
	t.Helper()
	var keys []certificate.TrustedKey
	for _, s := range signers {
		keys = append(keys, s.TrustedKey(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	}
	set, err := certificate.NewKeySet(cliOrigin, keys...)
	require.NoError(t, err)
	b, err := json.Marshal(set)
	require.NoError(t, err)
	path := filepath.Join(dir, fmt.Sprintf("keys-%d.json", len(keys)))
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestLogCmd_CheckpointPrintsTheSignedNote(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	env := newCLIEnv(t)
	env.engine.setLog(cliLog(t, signer, "a", "b"))
	code, stdout, stderr := env.run("", "log", "checkpoint")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, cliOrigin+"\n2\n"), stdout)
	assert.Contains(t, stdout, "— "+cliOrigin+" ")
}

func TestLogCmd_VerifyDetectsTruncationAndForks(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	other, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	tests := []struct {
		name       string
		before     *translog.Log // the log when the checkpoint was saved
		after      *translog.Log // the log the server shows now
		keys       []*certificate.Signer
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"grown log is consistent", cliLog(t, signer, "a", "b", "c"), cliLog(t, signer, "a", "b", "c", "d", "e"),
			[]*certificate.Signer{signer}, 0, "consistent: size 3 → 5\n", ""},
		{"unchanged log is consistent", cliLog(t, signer, "a", "b"), cliLog(t, signer, "a", "b"),
			[]*certificate.Signer{signer}, 0, "consistent: size 2 → 2\n", ""},
		{"from the empty log", cliLog(t, signer), cliLog(t, signer, "a"),
			[]*certificate.Signer{signer}, 0, "consistent: size 0 → 1\n", ""},
		{"shorter log is truncated", cliLog(t, signer, "a", "b", "c", "d", "e"), cliLog(t, signer, "a", "b", "c"),
			[]*certificate.Signer{signer}, 1, "", "TRUNCATED"},
		{"rewritten history is a fork", cliLog(t, signer, "a", "b", "c"), cliLog(t, signer, "a", "X", "c", "d", "e"),
			[]*certificate.Signer{signer}, 1, "", "FORKED"},
		{"same size, other root is a fork", cliLog(t, signer, "a", "b", "c"), cliLog(t, signer, "a", "b", "X"),
			[]*certificate.Signer{signer}, 1, "", "FORKED"},
		{"checkpoint by an untrusted key", cliLog(t, signer, "a"), cliLog(t, other, "a", "b"),
			[]*certificate.Signer{signer}, 1, "", "the server's checkpoint: checkpoint of \"" + cliOrigin + "\" is not signed by a trusted key"},
		{"rotated keys, both trusted", cliLog(t, signer, "a"), cliLog(t, other, "a", "b"),
			[]*certificate.Signer{signer, other}, 0, "consistent: size 1 → 2\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLIEnv(t)
			keys := cliKeysFile(t, env.dir, tt.keys...)
			saved := filepath.Join(env.dir, "checkpoint")

			env.engine.setLog(tt.before)
			code, stdout, stderr := env.run("", "log", "verify", "--keys", keys, "--save", saved)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "checkpoint verified")
			first, err := os.ReadFile(saved)
			require.NoError(t, err)

			env.engine.setLog(tt.after)
			code, stdout, stderr = env.run("", "log", "verify", "--keys", keys, "--since", saved, "--save", saved)
			assert.Equal(t, tt.wantCode, code, "stderr: %s", stderr)
			assert.Equal(t, tt.wantStdout, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
			now, err := os.ReadFile(saved)
			require.NoError(t, err)
			if tt.wantCode == 0 {
				latest, err := tt.after.Sign(context.Background())
				require.NoError(t, err)
				assert.Equal(t, string(latest.Note), string(now), "--save keeps the newest verified checkpoint")
			} else {
				assert.Equal(t, string(first), string(now), "a failed check keeps the earlier checkpoint")
			}
		})
	}
}

func TestLogCmd_VerifyRefusesBadInput(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	env := newCLIEnv(t)
	env.engine.setLog(cliLog(t, signer, "a"))
	keys := cliKeysFile(t, env.dir, signer)
	garbage := filepath.Join(env.dir, "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte("not a checkpoint"), 0o644))

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no keys", []string{"log", "verify"}, 2, "--keys KEYS.json is required"},
		{"keys not a key set", []string{"log", "verify", "--keys", garbage}, 1, "trusted keys"},
		{"since not a checkpoint", []string{"log", "verify", "--keys", keys, "--since", garbage}, 1, "the checkpoint in " + garbage},
		{"missing since file", []string{"log", "verify", "--keys", keys, "--since", filepath.Join(env.dir, "none")}, 1, "no such file"},
		{"unknown subcommand", []string{"log", "append"}, 2, "Usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := env.run("", tt.args...)
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}
