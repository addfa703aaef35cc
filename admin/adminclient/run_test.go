package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

const (
	runSubject = "dora@example.com"
	runTable   = "public.cli5_docs"
)

// memoryLayer is one table held in memory: record ids by subject.
type memoryLayer struct {
	mu   sync.Mutex
	rows map[string][]string
}

func (m *memoryLayer) Store() ledger.Store { return ledger.StorePostgres }
func (m *memoryLayer) Name() string        { return runTable }
func (m *memoryLayer) Matching(_ context.Context, subject string, _ []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.rows[subject]), nil
}
func (m *memoryLayer) Delete(_ context.Context, subject string, _ []string, beforeCommit func([]string) error) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.rows[subject]
	if err := beforeCommit(ids); err != nil {
		return nil, err
	}
	delete(m.rows, subject)
	return ids, nil
}
func (m *memoryLayer) Residual(_ context.Context, subject string, _ []string) (connector.Absence, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return connector.Absence{Residual: int64(len(m.rows[subject])), Method: "memory", Queries: []string{"rows[$1]"}}, nil
}
func (m *memoryLayer) Cleanup(context.Context) error                               { return nil }
func (m *memoryLayer) NearMisses(context.Context, string, []string) (int64, error) { return 0, nil }

func (m *memoryLayer) count(subject string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows[subject])
}

// runRig is a real admin API over an engine on a fresh SQLite ledger
// whose one table holds two records of runSubject, a client with an
// operator's token, and the engine's trusted keys in a file.
type runRig struct {
	client   *Client
	layer    *memoryLayer
	keysFile string
	dir      string
}

func newRunRig(t *testing.T) runRig {
	t.Helper()
	layer := &memoryLayer{rows: map[string][]string{runSubject: {"d1", "d2"}}}
	rig := enginetest.New(t, time.Hour, layer)
	rig.Record(t, runSubject, ledger.Entry{Store: ledger.StorePostgres, Table: runTable, RecordID: "d1"},
		ledger.Entry{Store: ledger.StorePostgres, Table: runTable, RecordID: "d2"})
	secret, entry, err := admin.NewToken("cli5-ops", admin.RoleOperator)
	require.NoError(t, err)
	api, err := admin.New(admin.Config{Engine: rig.Engine, Tokens: []admin.Token{entry}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := NewWithToken(srv.URL, secret)
	require.NoError(t, err)
	dir := t.TempDir()
	keys, err := json.Marshal(rig.Keys)
	require.NoError(t, err)
	keysFile := filepath.Join(dir, "keys.json")
	require.NoError(t, os.WriteFile(keysFile, keys, 0o644))
	return runRig{client: client, layer: layer, keysFile: keysFile, dir: dir}
}

func TestRunForget_AsksThenWaitsWritesAndVerifiesTheCertificateOffline(t *testing.T) {
	rig := newRunRig(t)
	var asked, stdout, progress bytes.Buffer
	out := filepath.Join(rig.dir, "cert.json")
	valid, err := rig.client.RunForget(context.Background(), ForgetRun{
		Subject: runSubject, Ask: AskOn(strings.NewReader("y\n"), &asked), Out: out, KeysFile: rig.keysFile, Poll: time.Millisecond,
	}, &stdout, &progress)
	require.NoError(t, err, progress.String())
	assert.True(t, valid, stdout.String())

	assert.Contains(t, progress.String(), "postgres "+runTable+": 2 rows, 2 ledger records")
	assert.Equal(t, "Delete these records and certify it? [y/N] ", asked.String())
	assert.Contains(t, progress.String(), "postgres "+runTable+": deleted 2, residual 0, done")
	assert.Contains(t, stdout.String(), "verdict: valid\n")
	assert.Contains(t, stdout.String(), "certificate: "+out+"\n")
	assert.Zero(t, rig.layer.count(runSubject))
	assert.NotContains(t, stdout.String()+progress.String(), runSubject, "the subject is never printed")

	cert, err := os.ReadFile(out)
	require.NoError(t, err)
	keyData, err := os.ReadFile(rig.keysFile)
	require.NoError(t, err)
	keys, err := certificate.ParseKeySet(keyData)
	require.NoError(t, err)
	assert.True(t, certificate.Verify(cert, keys, time.Now()).Valid(), "the file holds the certificate as signed")
}

func TestRunForget_WithoutKeysTheProxyVerifies(t *testing.T) {
	rig := newRunRig(t)
	var stdout, progress bytes.Buffer
	valid, err := rig.client.RunForget(context.Background(), ForgetRun{
		Subject: runSubject, Out: filepath.Join(rig.dir, "cert.json"), Poll: time.Millisecond,
	}, &stdout, &progress)
	require.NoError(t, err, progress.String())
	assert.True(t, valid)
	assert.Contains(t, stdout.String(), "verdict: valid (by the proxy; pass --keys KEYS.json to verify offline)")
}

func TestRunForget_NoDeletesNothing(t *testing.T) {
	rig := newRunRig(t)
	var asked, stdout, progress bytes.Buffer
	_, err := rig.client.RunForget(context.Background(), ForgetRun{
		Subject: runSubject, Ask: AskOn(strings.NewReader("n\n"), &asked), Poll: time.Millisecond,
	}, &stdout, &progress)
	require.ErrorIs(t, err, ErrDeclined)
	assert.Equal(t, 2, rig.layer.count(runSubject))
	assert.Empty(t, stdout.String(), "no request was started")
}

func TestRunForget_NothingFoundNeedsItsOwnConfirmation(t *testing.T) {
	rig := newRunRig(t)
	var stdout, progress bytes.Buffer
	_, err := rig.client.RunForget(context.Background(), ForgetRun{Subject: "nobody@example.com", Poll: time.Millisecond}, &stdout, &progress)
	require.ErrorContains(t, err, "pass --nothing-found with --yes")
	assert.Contains(t, progress.String(), "WARNING: ")
	assert.Empty(t, stdout.String(), "no request was started")

	var asked bytes.Buffer
	stdout.Reset()
	valid, err := rig.client.RunForget(context.Background(), ForgetRun{
		Subject: "nobody@example.com", Ask: AskOn(strings.NewReader("yes\n"), &asked), KeysFile: rig.keysFile,
		Out: filepath.Join(rig.dir, "nothing.json"), Poll: time.Millisecond,
	}, &stdout, &progress)
	require.NoError(t, err)
	assert.True(t, valid)
	assert.Contains(t, asked.String(), "Nothing was found. Certify that nothing was found?")
}

func TestRunForget_ABadKeysFileStopsBeforeAnythingIsDeleted(t *testing.T) {
	rig := newRunRig(t)
	var stdout, progress bytes.Buffer
	_, err := rig.client.RunForget(context.Background(), ForgetRun{
		Subject: runSubject, KeysFile: filepath.Join(rig.dir, "absent.json"), Poll: time.Millisecond,
	}, &stdout, &progress)
	require.ErrorContains(t, err, "--keys: certificate: reading the trusted keys file: open "+filepath.Join(rig.dir, "absent.json"))
	assert.Equal(t, 2, rig.layer.count(runSubject))
}

func TestAskOn_NoAnswerIsAnErrorThatNamesYes(t *testing.T) {
	_, err := AskOn(strings.NewReader(""), &bytes.Buffer{})("Go?")
	require.ErrorContains(t, err, "pass --yes")
	yes, err := AskOn(strings.NewReader("Y"), &bytes.Buffer{})("Go?")
	require.NoError(t, err)
	assert.True(t, yes, "an answer without a newline counts")
	yes, err = AskOn(strings.NewReader("sure\n"), &bytes.Buffer{})("Go?")
	require.NoError(t, err)
	assert.False(t, yes)
}
