package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

// memoryLayer is one table held in memory: record ids by subject.
type memoryLayer struct {
	mu   sync.Mutex
	rows map[string][]string
}

func (m *memoryLayer) Store() ledger.Store { return ledger.StorePostgres }
func (m *memoryLayer) Name() string        { return "public.mcp_docs" }
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
func (m *memoryLayer) Cleanup(context.Context) error { return nil }
func (m *memoryLayer) NearMisses(context.Context, string, []string) (int64, error) {
	return 0, nil
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// apiRig is a real admin API over an engine on a fresh SQLite ledger,
// holding two records of alice, with an operator and an auditor token.
type apiRig struct {
	enginetest.Rig
	URL                    string
	OperatorToken, Auditor string
	Log                    *syncBuffer
	Config                 Config
}

const alice = "alice@example.com"

func newAPIRig(t *testing.T) apiRig {
	t.Helper()
	layer := &memoryLayer{rows: map[string][]string{alice: {"d1", "d2"}}}
	rig := enginetest.New(t, time.Hour, layer)
	rig.Record(t, alice, ledger.Entry{Store: ledger.StorePostgres, Table: "public.mcp_docs", RecordID: "d1"},
		ledger.Entry{Store: ledger.StorePostgres, Table: "public.mcp_docs", RecordID: "d2"})
	opSecret, opEntry, err := admin.NewToken("agent-ops", admin.RoleOperator)
	require.NoError(t, err)
	auSecret, auEntry, err := admin.NewToken("agent-audit", admin.RoleAuditor)
	require.NoError(t, err)
	api, err := admin.New(admin.Config{Engine: rig.Engine, Tokens: []admin.Token{opEntry, auEntry}, Logger: slog.New(slog.DiscardHandler),
		Coverage: admin.CoverageConfig{Policy: coveragePolicy, Checkers: []admin.CoverageChecker{memoryCoverage{}}}})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	refs, err := NewReferences(bytes.Repeat([]byte{7}, 32), 0)
	require.NoError(t, err)
	logs := &syncBuffer{}
	keys := rig.Keys
	return apiRig{Rig: rig, URL: srv.URL, OperatorToken: opSecret, Auditor: auSecret, Log: logs,
		Config: Config{References: refs, Keys: &keys, Logger: slog.New(slog.NewTextHandler(logs, nil)), Version: "test"}}
}

// session connects a go-sdk client over the in-memory transport to the
// server a process holding token would run.
func (r apiRig) session(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	client, err := adminclient.NewWithToken(r.URL, token)
	require.NoError(t, err)
	server, _, err := ForClient(ctx, r.Config, client)
	require.NoError(t, err)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// coveragePolicy covers the rig's one table.
var coveragePolicy = coverage.Policy{Tables: []coverage.TableRule{{Table: "public.mcp_docs", Where: "lethe.yaml:5"}}}

// memoryCoverage is the rig's store's coverage check: its table has a
// rule, and one other table with a vector column has none.
type memoryCoverage struct{}

func (memoryCoverage) Name() string { return coverage.StorePostgres }

func (memoryCoverage) Coverage(context.Context, coverage.Policy) (coverage.Report, error) {
	return coverage.Report{TablesChecked: 2, Findings: []coverage.Finding{{
		Severity: coverage.Error, Code: coverage.CodeUncoveredTable, Store: coverage.StorePostgres, Table: "public.mcp_notes", Where: "database",
		Message: "table public.mcp_notes has vector column embedding and no rule",
	}}}, nil
}
