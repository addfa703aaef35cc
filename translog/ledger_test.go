package translog_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
	"github.com/stretchr/testify/require"
)

// The ledger's storages are the ones production uses; the Log must behave
// the same over them as over MemoryStorage.

var (
	_ translog.Storage = (*ledger.SQLiteTlog)(nil)
	_ translog.Storage = (*ledger.PostgresTlog)(nil)
)

func sqliteStorage(t *testing.T) func(t *testing.T) translog.Storage {
	path := filepath.Join(t.TempDir(), "ledger.db")
	return func(t *testing.T) translog.Storage {
		l, err := ledger.OpenSQLite(path, ledger.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return l.TransparencyLog()
	}
}

func TestLog_SQLite(t *testing.T) { runLogSuite(t, sqliteStorage) }

// pgConnString is the test cluster of scripts/testdb.sh. As in package
// ledger, the tests fail rather than skip without it.
func pgConnString(t *testing.T) string {
	t.Helper()
	if os.Getenv("LETHE_TEST_PG_PORT") == "" {
		t.Fatal(`LETHE_TEST_PG_PORT is not set: run scripts/test.sh, or start the test cluster with scripts/testdb.sh start and eval "$(scripts/testdb.sh env)"`)
	}
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s connect_timeout=5",
		os.Getenv("LETHE_TEST_PG_HOST"), os.Getenv("LETHE_TEST_PG_PORT"), os.Getenv("LETHE_TEST_PG_USER"),
		os.Getenv("LETHE_TEST_PG_PASSWORD"), os.Getenv("LETHE_TEST_PG_DB"))
}

func postgresStorage(t *testing.T) func(t *testing.T) translog.Storage {
	conn := pgConnString(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "lethe_tlog_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return func(t *testing.T) translog.Storage {
		l, err := ledger.OpenPostgres(context.Background(), conn, ledger.Options{Schema: schema})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return l.TransparencyLog()
	}
}

func TestLog_Postgres(t *testing.T) {
	pgConnString(t)
	runLogSuite(t, postgresStorage)
}
