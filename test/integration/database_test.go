//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
)

// otherDatabase creates a second database on the test cluster, dropped
// when the test ends, and returns the test cluster's description with it
// as the database.
func otherDatabase(t *testing.T, db testDB) testDB {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	other := db
	other.DB = "lethe_other_" + hex.EncodeToString(b[:])
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctxT(t), "CREATE DATABASE "+other.DB)
	require.NoError(t, err)
	t.Cleanup(func() {
		c := connect(t, db.URL(db.Addr(), ""))
		_, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+other.DB+" WITH (FORCE)")
		require.NoError(t, err)
	})
	return other
}

// startDatabaseCapture is a capturing proxy whose rules belong to database.
func startDatabaseCapture(t *testing.T, db testDB, database string, rules []extract.Rule) *captured {
	t.Helper()
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	c := capture.New(capture.Config{Rules: compiled, Ledger: l, Hasher: h, Mode: capture.Strict, ConfirmHold: testConfirmHold})
	t.Cleanup(func() { c.Close(); l.Close() })
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer = pgcapture.New(c, pgcapture.Config{Database: database}) })
	return &captured{proxy: p, capture: c, ledger: l, hasher: h}
}

// TestCapture_RulesApplyToTheConfiguredDatabaseOnly: a second database on
// the same server has a table of the same name as a configured one. Writes
// to it through the proxy are not tagged and an INSERT … SELECT there is
// not refused, in the simple and the extended protocol; the configured
// database still captures and refuses as before.
func TestCapture_RulesApplyToTheConfiguredDatabaseOnly(t *testing.T) {
	db := loadTestDB(t)
	other := otherDatabase(t, db)
	const columns = "id text PRIMARY KEY, user_id text, body text"
	pgxTable(t, db, "public.dbrules_notes", columns)
	pgxTable(t, other, "public.dbrules_notes", columns)
	uid, _ := extract.ParseSubject("user_id")
	c := startDatabaseCapture(t, db, db.DB, []extract.Rule{{Table: "public.dbrules_notes", ID: "id", Subjects: []extract.Subject{uid}}})
	ctx := ctxT(t)

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		conn := connect(t, other.URL(c.Addr, ""))
		_, err := conn.Exec(ctx, "INSERT INTO dbrules_notes (id, user_id, body) VALUES ($1, $2, 'x')", mode, "o-"+mode.String(), "dbrules-alice")
		require.NoError(t, err, "%s: a write to the other database passes", mode)
		_, err = conn.Exec(ctx, "INSERT INTO dbrules_notes (id, user_id, body) SELECT id || '-copy', user_id, body FROM dbrules_notes WHERE id = $1", mode, "o-"+mode.String())
		require.NoError(t, err, "%s: an INSERT … SELECT in the other database is not refused", mode)
	}
	var n int
	require.NoError(t, connect(t, other.URL(other.Addr(), "")).QueryRow(ctx, "SELECT count(*) FROM dbrules_notes").Scan(&n))
	require.Equal(t, 4, n, "every write to the other database reached it")
	require.Zero(t, c.capture.Stats.Intents.Load(), "nothing of the other database was recorded")
	require.Zero(t, c.capture.Stats.Refused.Load())

	conn := connect(t, db.URL(c.Addr, ""))
	_, err := conn.Exec(ctx, "INSERT INTO dbrules_notes (id, user_id, body) VALUES ('c1', 'dbrules-alice', 'x')")
	require.NoError(t, err)
	require.Equal(t, []string{"c1"}, c.confirmed(t, "public.dbrules_notes", "dbrules-alice"))
	recs, err := c.ledger.BySubject(ctx, c.hasher.Hash("dbrules-alice"))
	require.NoError(t, err)
	require.Len(t, recs, 1, "the ledger holds the configured database's write only")

	_, err = conn.Exec(ctx, "INSERT INTO dbrules_notes (id, user_id, body) SELECT id || '-copy', user_id, body FROM dbrules_notes")
	require.Equal(t, capture.CodeUnattributed, pgCode(err), "the configured database still refuses: %v", err)
}

// TestBinary_RulesWithoutADatabaseNameTheKeyToSet: lethe-proxy refuses a
// config with capture rules and no way to know their database, naming the
// file, the line and the key to set.
func TestBinary_RulesWithoutADatabaseNameTheKeyToSet(t *testing.T) {
	bin := buildProxy(t)
	cfg := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`postgres:
  upstream: 127.0.0.1:5432
capture:
  tables:
    - {table: public.notes, id: id, subjects: [user_id]}
`), 0o600))
	out, err := exec.Command(bin, "serve", "--config", cfg).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), cfg+":3: capture: database is missing: name the database capture.tables are in (write e.g. database: app), or set capture.store")
}
