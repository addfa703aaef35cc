//go:build integration

package integration

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestNodePg runs clients/nodepg_client.js (node-postgres: a pool with
// concurrent parameterized queries, named prepared statements, transactions,
// a LangChain.js-style 1500-parameter insert into jsonb and vector columns,
// LISTEN/NOTIFY, errors) directly and through the proxy. The two JSON reports
// must be identical and hold the expected values.
func TestNodePg(t *testing.T) {
	db := loadTestDB(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: run scripts/setup.sh")
	}
	if _, err := os.Stat(filepath.Join("node", "node_modules", "pg", "package.json")); err != nil {
		t.Fatalf("test/integration/node/node_modules has no pg (%v): run scripts/setup.sh", err)
	}
	p := startProxy(t, db, nil)
	const prefix = "lethe_nodepg"
	extDropTables(t, db, prefix+"_docs")

	script, err := filepath.Abs(filepath.Join("clients", "nodepg_client.js"))
	require.NoError(t, err)
	var outs []string
	for _, addr := range []string{db.Addr(), p.Addr} {
		res := extRun(t, "", extEnv(db, addr, db.User, db.Password), node, script, db.URL(addr, "application_name=lethe-nodepg"), prefix)
		require.Equal(t, 0, res.Exit, "%s", res)
		outs = append(outs, res.Stdout)
	}
	extEqual(t, outs[0], outs[1], "node-postgres report through the proxy vs direct")

	var doc any
	require.NoError(t, json.Unmarshal([]byte(outs[1]), &doc))
	for path, want := range map[string]string{
		"concurrent.rows.0":              `[0, "s0 ✓", 0, true]`,
		"concurrent.rows.59":             `[118, "s59 ✓", 14.75, false]`,
		"concurrent.several_backends":    `true`,
		"named_pool.29":                  `[87, "v29"]`,
		"named_client.results":           `[10, 11, 12, 13]`,
		"named_client.server_statements": `[{"name": "lethe_sum", "statement": "SELECT $1::int + $2::int AS s", "types": "{integer,integer}"}]`,
		"transaction.inside":             `1`,
		"transaction.after":              `0`,
		"transaction.failed.code":        `"22012"`,
		"transaction.aborted.code":       `"25P02"`,
		"transaction.rollback":           `"ROLLBACK"`,
		"transaction.final":              `0`,
		"bulk_insert.params":             `1500`,
		"bulk_insert.rowCount":           `500`,
		"bulk_insert.ids":                `[3, 502]`,
		"bulk_insert.search.0":           `{"content": "document 10: “quoted” ✓", "distance": 0, "embedding": "[10,5,-10]", "metadata": {"i": 10, "nested": {"even": true}, "source": "lethe", "tags": ["a", "t1"]}}`,
		"bulk_insert.search.1.embedding": `"[9,4.5,-9]"`,
		"bulk_insert.search.1.distance":  `1.5`,
		"bulk_insert.filtered":           `{"n": 250, "s": 62750}`,
		"large_result":                   `{"fields": ["g", "h"], "md5": "a84fc5a18620f3af919e99c7ff2141ce", "rows": 20000}`,
		"notify":                         `{"channel": "lethe_nodepg_ch", "from_notifier": true, "payload": "hello from node ✓"}`,
		"errors.0":                       `{"code": "42601", "message": "syntax error at or near \"SELEC\"", "position": "1", "severity": "ERROR"}`,
		"errors.1.code":                  `"42P01"`,
		"errors.2.code":                  `"22P02"`,
		"errors.3.code":                  `"23505"`,
		"errors.3.constraint":            `"lethe_nodepg_docs_pkey"`,
		"errors.4.code":                  `"42P01"`,
		"errors.5":                       `"still working"`,
		"errors.6":                       `500`,
		"short_lived":                    `[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]`,
		"unexpected_errors":              `[]`,
	} {
		require.JSONEq(t, want, extJSONAt(t, doc, path), path)
	}
}

// TestNodePgTerminateThenReadGetsNoError is the protocol-level form of what
// node-postgres does in Client.end(): send Terminate, half-close the socket
// (or keep it open) and read until the server closes. The server closes
// silently, so the proxy must too; an ErrorResponse at that point is emitted
// by node-postgres as an 'error' event on the ended client, which crashes a
// program without an 'error' listener.
func TestNodePgTerminateThenReadGetsNoError(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	for _, tc := range []struct {
		name      string
		halfClose bool
		rounds    int // the half-close case is a race: try it several times
	}{
		{"keep write side open", false, 1},
		{"half-close like node-postgres", true, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []struct{ name, addr string }{{"direct", db.Addr()}, {"proxy", p.Addr}} {
				for i := 0; i < tc.rounds; i++ {
					got := extTerminateAndDrain(t, db.DSN(target.addr, "sslmode=disable"), tc.halfClose)
					require.Empty(t, string(got), "%s, round %d: bytes after Terminate", target.name, i)
				}
			}
		})
	}
}

// extTerminateAndDrain connects, sends Terminate and returns whatever the
// other end sends before it closes the connection.
func extTerminateAndDrain(t *testing.T, dsn string, halfClose bool) []byte {
	t.Helper()
	ctx := ctxT(t)
	pc, err := pgconn.Connect(ctx, dsn)
	require.NoError(t, err)
	hj, err := pc.Hijack()
	require.NoError(t, err)
	nc := hj.Conn
	defer nc.Close()
	_, err = nc.Write([]byte{'X', 0, 0, 0, 4})
	require.NoError(t, err)
	if halfClose {
		require.NoError(t, nc.(*net.TCPConn).CloseWrite())
	}
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(nc)
	require.NoError(t, err, "the connection must be closed after Terminate")
	return got
}
